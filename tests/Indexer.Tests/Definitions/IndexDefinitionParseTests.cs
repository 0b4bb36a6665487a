using System.Text;

namespace Indexing.Indexer.Tests;

public sealed class IndexDefinitionParseTests
{
    private const string Orders = """
        {
          "name": "orders-by-customer",
          "collection": "orders",
          "fields": [
            { "name": "customer", "path": "customer.name", "type": "text" },
            { "name": "customer_id", "path": "customer.id", "type": "keyword", "stored": true, "sortable": true },
            { "name": "product", "path": "lines[].product", "type": "keyword" },
            { "name": "total", "path": "total", "type": "double", "sortable": true },
            { "name": "quantity", "path": "lines[].quantity", "type": "long", "stored": true },
            { "name": "paid", "path": "payment.paid", "type": "bool" }
          ]
        }
        """;

    [Fact]
    public void Parse_ValidDefinition_ReadsEveryValueAndDefault()
    {
        var definition = IndexDefinition.Parse(Orders);

        Assert.Equal("orders-by-customer", definition.Name);
        Assert.Equal("orders", definition.Collection);
        Assert.Equal<IndexFieldDefinition>(
            [
                new IndexFieldDefinition("customer", "customer.name", IndexFieldType.Text),
                new IndexFieldDefinition("customer_id", "customer.id", IndexFieldType.Keyword, Stored: true, Sortable: true),
                new IndexFieldDefinition("product", "lines[].product", IndexFieldType.Keyword),
                new IndexFieldDefinition("total", "total", IndexFieldType.Double, Sortable: true),
                new IndexFieldDefinition("quantity", "lines[].quantity", IndexFieldType.Long, Stored: true),
                new IndexFieldDefinition("paid", "payment.paid", IndexFieldType.Bool),
            ],
            definition.Fields);
    }

    [Fact]
    public void ToJson_ParsedBack_GivesEqualDefinition()
    {
        var definition = IndexDefinition.Parse(Orders);

        var json = definition.ToJson();
        var again = IndexDefinition.Parse(json);

        Assert.Equal(definition.Name, again.Name);
        Assert.Equal(definition.Collection, again.Collection);
        Assert.Equal<IndexFieldDefinition>(definition.Fields, again.Fields);
        Assert.Equal(definition.DefinitionHash, again.DefinitionHash);
        Assert.Equal(json, again.ToJson());
        Assert.Contains("\"stored\": false", json, StringComparison.Ordinal);
    }

    [Fact]
    public void ToJson_NonAsciiCollectionAndPath_KeepsThemReadableAndRoundTrips()
    {
        var json = Definitions.Json("""{ "name": "client", "path": "commande.clé \"x\"", "type": "keyword" }""", collection: "\"commandes-été\"");
        var definition = IndexDefinition.Parse(json);

        var written = definition.ToJson();

        Assert.Contains("commandes-été", written, StringComparison.Ordinal);
        Assert.Equal("commande.clé \"x\"", IndexDefinition.Parse(written).Fields[0].Path);
    }

    [Fact]
    public void Parse_Utf8BytesAndString_GiveTheSameDefinition()
    {
        var fromBytes = IndexDefinition.Parse(Encoding.UTF8.GetBytes(Orders));
        var fromString = IndexDefinition.Parse(Orders);

        Assert.Equal(fromString.DefinitionHash, fromBytes.DefinitionHash);
        Assert.Equal<IndexFieldDefinition>(fromString.Fields, fromBytes.Fields);
    }

    [Fact]
    public void Create_SameValuesAsJson_GivesTheSameHash()
    {
        var created = IndexDefinition.Create("orders-by-customer", "orders",
            [new IndexFieldDefinition("customer", "customer.name", IndexFieldType.Text)]);

        Assert.Equal(IndexDefinition.Parse(Definitions.Json()).DefinitionHash, created.DefinitionHash);
    }

    [Fact]
    public void Create_SortableText_ThrowsWithTheSameRuleAsParse()
    {
        var exception = Assert.Throws<IndexDefinitionException>(() => IndexDefinition.Create("a", "orders",
            [new IndexFieldDefinition("body", "body", IndexFieldType.Text, Sortable: true)]));

        Assert.Equal("fields[0].sortable", Assert.Single(exception.Problems).Location);
    }

    [Fact]
    public void Create_UndefinedType_ReportsType()
    {
        var exception = Assert.Throws<IndexDefinitionException>(() => IndexDefinition.Create("a", "orders",
            [new IndexFieldDefinition("x", "x", (IndexFieldType)42)]));

        var problem = Assert.Single(exception.Problems);
        Assert.Equal("fields[0].type", problem.Location);
        Assert.Contains("42", problem.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("a")]
    [InlineData("0")]
    [InlineData("orders-by-customer")]
    [InlineData("orders_2024")]
    [InlineData("a-")]
    public void Parse_ValidName_IsAccepted(string name)
    {
        Assert.Equal(name, IndexDefinition.Parse(Definitions.Json(name: $"\"{name}\"")).Name);
    }

    [Fact]
    public void Parse_NameOf64Characters_IsAccepted()
    {
        var name = new string('a', 64);

        Assert.Equal(name, IndexDefinition.Parse(Definitions.Json(name: $"\"{name}\"")).Name);
    }

    [Theory]
    [InlineData("..", "starts with '.'")]
    [InlineData("/", "starts with '/'")]
    [InlineData("", "is empty")]
    [InlineData("a/b", "has '/' at character 2")]
    [InlineData("A", "starts with 'A'")]
    [InlineData("-a", "starts with '-'")]
    [InlineData("_a", "starts with '_'")]
    [InlineData("a b", "has U+0020 at character 2")]
    [InlineData("é", "starts with U+00E9")]
    [InlineData("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "is 65 characters long, over the limit of 64")]
    public void Parse_BadName_ReportsNameWithValueAndRule(string name, string reason)
    {
        var problem = Definitions.OnlyProblem(Definitions.Json(name: $"\"{name}\""));

        Assert.Equal("name", problem.Location);
        Assert.Contains(reason, problem.Message, StringComparison.Ordinal);
        Assert.Contains("1 to 64 characters from a-z, 0-9, '_' and '-'", problem.Message, StringComparison.Ordinal);
        Assert.Contains(name.Length <= 64 ? $"'{name}'" : "(truncated; 65 UTF-8 bytes)", problem.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("", "collection is empty")]
    [InlineData("orders/17", "collection 'orders/17' contains '/' at character 7")]
    [InlineData("/", "contains '/' at character 1")]
    [InlineData("ord\\u0001ers", "collection 'ord\\u0001ers' contains a control character")]
    public void Parse_BadCollection_ReportsCollectionWithValue(string collection, string reason)
    {
        var problem = Definitions.OnlyProblem(Definitions.Json(collection: $"\"{collection}\""));

        Assert.Equal("collection", problem.Location);
        Assert.Contains(reason, problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_CollectionWithSlash_SuggestsThePartBeforeIt()
    {
        var problem = Definitions.OnlyProblem(Definitions.Json(collection: "\"orders/17\""));

        Assert.Contains("part of a document id before the first '/'", problem.Message, StringComparison.Ordinal);
        Assert.Contains("Did you mean 'orders'?", problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Create_CollectionWithUnpairedSurrogate_IsRefused()
    {
        var exception = Assert.Throws<IndexDefinitionException>(() => IndexDefinition.Create("a", "ord\ud800ers",
            [new IndexFieldDefinition("x", "x", IndexFieldType.Keyword)]));

        var problem = Assert.Single(exception.Problems);
        Assert.Equal("collection", problem.Location);
        Assert.Contains("'ord\\uD800ers' contains an unpaired surrogate", problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_StringEscapingAnUnpairedSurrogate_IsRefusedWithItsPosition()
    {
        var problem = Definitions.OnlyProblem("""{ "name": "a", "collection": "ord\ud800ers", "fields": [] }""");

        Assert.Equal("", problem.Location);
        Assert.Contains("at byte 30 that escapes an unpaired surrogate", problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_CollectionOf511Utf8Bytes_IsAcceptedAnd512IsRefused()
    {
        var longest = string.Concat(Enumerable.Repeat("é", 255)) + "a"; // 511 bytes
        var tooLong = longest + "a";

        Assert.Equal(longest, IndexDefinition.Parse(Definitions.Json(collection: $"\"{longest}\"")).Collection);
        var problem = Definitions.OnlyProblem(Definitions.Json(collection: $"\"{tooLong}\""));
        Assert.Equal("collection", problem.Location);
        Assert.Contains("is 512 UTF-8 bytes", problem.Message, StringComparison.Ordinal);
        Assert.Contains("at most 511", problem.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("a")]
    [InlineData("_private")]
    [InlineData("customer.name")]
    [InlineData("Total2")]
    public void Parse_ValidFieldName_IsAccepted(string name)
    {
        var field = Definitions.ParseField($$"""
            "name": "{{name}}", "path": "x", "type": "keyword"
            """);

        Assert.Equal(name, field.Name);
    }

    [Theory]
    [InlineData("", "is empty")]
    [InlineData("1st", "starts with '1'")]
    [InlineData(".a", "starts with '.'")]
    [InlineData("a b", "has U+0020 at character 2")]
    [InlineData("a-b", "has '-' at character 2")]
    [InlineData("prix€", "has U+20AC at character 5")]
    [InlineData("__id", "reserved for the fields the indexer adds itself")]
    [InlineData("__", "reserved for the fields the indexer adds itself")]
    public void Parse_BadFieldName_ReportsFieldNameWithValue(string name, string reason)
    {
        var problem = Definitions.OnlyFieldProblem($$"""
            "name": "{{name}}", "path": "x", "type": "keyword"
            """);

        Assert.Equal("fields[0].name", problem.Location);
        Assert.Contains($"'{name}'", problem.Message, StringComparison.Ordinal);
        Assert.Contains(reason, problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_FieldNameOf65Characters_IsRefusedWithTheLimit()
    {
        var problem = Definitions.OnlyFieldProblem($$"""
            "name": "{{new string('f', 65)}}", "path": "x", "type": "keyword"
            """);

        Assert.Equal("fields[0].name", problem.Location);
        Assert.Contains("is 65 characters long, over the limit of 64", problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_DuplicateFieldName_ReportsTheSecondAndNamesTheFirst()
    {
        var problem = Definitions.OnlyProblem(Definitions.Json("""
            { "name": "a", "path": "a", "type": "keyword" },
            { "name": "b", "path": "b", "type": "keyword" },
            { "name": "a", "path": "c", "type": "long" }
            """));

        Assert.Equal("fields[2].name", problem.Location);
        Assert.Contains("'a' is already used by fields[0]", problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_FieldNamesDifferingOnlyByCase_AreRefusedWithTheReason()
    {
        var problem = Definitions.OnlyProblem(Definitions.Json("""
            { "name": "customer", "path": "a", "type": "keyword" },
            { "name": "Customer", "path": "b", "type": "text" }
            """));

        Assert.Equal("fields[1].name", problem.Location);
        Assert.Contains("'Customer' differs from fields[0]'s 'customer' only by case", problem.Message, StringComparison.Ordinal);
        Assert.Contains("query", problem.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("integer")]
    [InlineData("Text")]
    [InlineData("")]
    public void Parse_UnknownType_ListsTheAllowedTypes(string type)
    {
        var problem = Definitions.OnlyFieldProblem($$"""
            "name": "x", "path": "x", "type": "{{type}}"
            """);

        Assert.Equal("fields[0].type", problem.Location);
        Assert.Contains($"'{type}'", problem.Message, StringComparison.Ordinal);
        Assert.Contains("text, keyword, long, double, bool", problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_SortableText_IsRefusedSuggestingKeyword()
    {
        var problem = Definitions.OnlyFieldProblem("""
            "name": "body", "path": "body", "type": "text", "sortable": true
            """);

        Assert.Equal("fields[0].sortable", problem.Location);
        Assert.Contains("'body'", problem.Message, StringComparison.Ordinal);
        Assert.Contains("keyword field", problem.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("keyword")]
    [InlineData("long")]
    [InlineData("double")]
    [InlineData("bool")]
    public void Parse_SortableNonText_IsAccepted(string type)
    {
        var field = Definitions.ParseField($$"""
            "name": "x", "path": "x", "type": "{{type}}", "sortable": true
            """);

        Assert.True(field.Sortable);
    }

    [Fact]
    public void Parse_UnknownFieldProperty_IsRefusedWithASuggestion()
    {
        var problem = Definitions.OnlyFieldProblem("""
            "name": "x", "path": "x", "type": "keyword", "sortible": true
            """);

        Assert.Equal("fields[0].sortible", problem.Location);
        Assert.Contains("unknown property 'sortible' (did you mean 'sortable'?)", problem.Message, StringComparison.Ordinal);
        Assert.Contains("name, path, type, stored, sortable", problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_UnknownRootProperty_IsRefused()
    {
        var problem = Definitions.OnlyProblem("""
            { "name": "a", "collection": "orders", "fields": [ { "name": "x", "path": "x", "type": "keyword" } ], "analyzer": "english" }
            """);

        Assert.Equal("analyzer", problem.Location);
        Assert.Contains("unknown property 'analyzer'", problem.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("did you mean", problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_RepeatedProperty_IsRefused()
    {
        var problem = Definitions.OnlyFieldProblem("""
            "name": "x", "path": "x", "type": "keyword", "type": "long"
            """);

        Assert.Equal("fields[0].type", problem.Location);
        Assert.Contains("appears more than once", problem.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("\"name\": \"x\", \"path\": \"x\", \"type\": \"keyword\", \"stored\": \"yes\"", "fields[0].stored", "must be true or false (without quotes), but is the string 'yes'")]
    [InlineData("\"name\": \"x\", \"path\": \"x\", \"type\": \"keyword\", \"sortable\": 1", "fields[0].sortable", "but is the number 1")]
    [InlineData("\"name\": 5, \"path\": \"x\", \"type\": \"keyword\"", "fields[0].name", "must be a JSON string, but is the number 5")]
    [InlineData("\"name\": \"x\", \"path\": [\"x\"], \"type\": \"keyword\"", "fields[0].path", "must be a JSON string, but is an array")]
    [InlineData("\"name\": \"x\", \"path\": \"x\", \"type\": null", "fields[0].type", "must be a JSON string, but is null")]
    public void Parse_WrongJsonType_ReportsLocationAndWhatItIs(string properties, string location, string message)
    {
        var problem = Definitions.OnlyFieldProblem(properties);

        Assert.Equal(location, problem.Location);
        Assert.Contains(message, problem.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("""{ "name": "a", "collection": "orders", "fields": {} }""", "fields", "must be an array of field objects, but is an object")]
    [InlineData("""{ "name": "a", "collection": "orders", "fields": [ "x" ] }""", "fields[0]", "must be a field object")]
    [InlineData("""{ "name": "a", "collection": "orders", "fields": [] }""", "fields", "at least one field")]
    [InlineData("""[ { "name": "a" } ]""", "", "is a JSON object")]
    public void Parse_WrongShape_ReportsLocation(string json, string location, string message)
    {
        var problem = Definitions.OnlyProblem(json);

        Assert.Equal(location, problem.Location);
        Assert.Contains(message, problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_MissingRequiredProperties_ReportsEachOne()
    {
        var problems = Definitions.Problems("""{ "fields": [ { "type": "keyword" } ] }""");

        Assert.Equal(["collection", "fields[0].name", "fields[0].path", "name"], problems.Select(p => p.Location).Order(StringComparer.Ordinal));
        Assert.All(problems, p => Assert.Contains("is missing", p.Message, StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("""{ "name": "a", """, 1, "line 1")]
    [InlineData("{ \"name\": \"a\",\n  \"collection\": \"orders\",\n}", 3, "line 3, byte 1")]
    [InlineData("{ \"name\": 'a' }", 1, "line 1, byte 11")]
    [InlineData("""{ "name": "a" } x""", 1, "line 1")]
    [InlineData("", 1, "line 1")]
    public void Parse_MalformedJson_ReportsLineAndPosition(string json, int line, string where)
    {
        var problem = Definitions.OnlyProblem(json);

        Assert.Equal("", problem.Location);
        Assert.Contains("not well-formed JSON", problem.Message, StringComparison.Ordinal);
        Assert.Contains($"line {line}", problem.Message, StringComparison.Ordinal);
        Assert.Contains(where, problem.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("LineNumber", problem.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("reader options", problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_InvalidUtf8_IsRefused()
    {
        var exception = Assert.Throws<IndexDefinitionException>(() => IndexDefinition.Parse([(byte)'{', 0xFF, (byte)'}']));

        Assert.Contains("not valid UTF-8", Assert.Single(exception.Problems).Message, StringComparison.Ordinal);
    }

    // Problems of the JSON form (types, unknown properties) come first, then broken rules.
    [Fact]
    public void Parse_SeveralProblems_ReportsThemAll()
    {
        var exception = Assert.Throws<IndexDefinitionException>(() => IndexDefinition.Parse("""
            {
              "name": "Orders",
              "collection": "orders/",
              "fields": [
                { "name": "customer", "path": "customer..name", "type": "text", "sortable": true },
                { "name": "CUSTOMER", "path": "c", "type": "str" },
                { "name": "ok", "path": "ok", "type": "keyword", "stored": "yes" }
              ]
            }
            """));

        Assert.Equal(
            ["fields[1].type", "fields[2].stored", "name", "collection", "fields[0].path", "fields[0].sortable", "fields[1].name"],
            exception.Problems.Select(p => p.Location));
        Assert.Equal("Orders", exception.IndexName);
        Assert.StartsWith("index definition 'Orders' has 7 problems:\n  fields[1].type: ", exception.Message, StringComparison.Ordinal);
    }
}
