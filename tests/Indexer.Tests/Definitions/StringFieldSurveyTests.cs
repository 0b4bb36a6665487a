using System.Text;

using Indexing.Storage;

namespace Indexing.Indexer.Tests;

public sealed class StringFieldSurveyTests
{
    private static StringFieldSurvey Survey(params string[] documents)
    {
        var survey = new StringFieldSurvey();
        foreach (var document in documents)
        {
            survey.Add(Encoding.UTF8.GetBytes(document));
        }

        return survey;
    }

    [Fact]
    public void Add_NestedObjectsAndArrays_FindsEveryStringPathInDefinitionGrammar()
    {
        var survey = Survey("""
            { "title": "a", "count": 3, "ok": true, "none": null,
              "customer": { "name": "n", "address": { "city": "c", "zip": 12345 } },
              "tags": ["x", "y"], "matrix": [["p"], ["q", 1]],
              "lines": [ { "product": "p1", "qty": 2 }, { "product": "p2", "notes": ["n1"] } ] }
            """);

        Assert.Equal(
            ["customer.address.city", "customer.name", "lines[].notes[]", "lines[].product", "matrix[]", "tags[]", "title"],
            survey.DocumentsByPath.Keys.Order(StringComparer.Ordinal));
        Assert.All(survey.DocumentsByPath.Values, count => Assert.Equal(1, count));
    }

    [Fact]
    public void Add_PathInSomeDocumentsOnly_CountsDocumentsNotValues()
    {
        var survey = Survey(
            """{ "title": "a", "tags": ["x", "y", "z"] }""",
            """{ "title": "b" }""",
            """{ "title": 7, "tags": [] }""");

        Assert.Equal(3, survey.Documents);
        Assert.Equal(2, survey.DocumentsByPath["title"]);
        Assert.Equal(1, survey.DocumentsByPath["tags[]"]);
    }

    [Fact]
    public void Add_SamePathWithAndWithoutArrays_IsOnePathMarkedWhereAnyDocumentHadAnArray()
    {
        var survey = Survey(
            """{ "tags": "x" }""",
            """{ "tags": ["y", "z"] }""",
            """{ "o": { "b": "q" } }""",
            """{ "o": [ { "b": "r" } ] }""");

        Assert.Equal(
            ["o[].b:2", "tags[]:2"],
            survey.DocumentsByPath.Select(p => $"{p.Key}:{p.Value}").Order(StringComparer.Ordinal));
        Assert.Equal(2, survey.DocumentsByPath["tags[]"]);
        Assert.False(survey.DocumentsByPath.ContainsKey("tags"));
        Assert.False(survey.DocumentsByPath.ContainsKey("o.b"));
    }

    [Fact]
    public void Add_ArraysAtDifferentSegmentsInDifferentDocuments_MarksEachSegmentThatHadOne()
    {
        var survey = Survey(
            """{ "a": [ { "b": { "c": "x" } } ], "plain": { "d": "p" } }""",
            """{ "a": { "b": [ { "c": ["y"] } ] } }""",
            """{ "a": { "b": { "c": "z" } }, "plain": { "d": "p" } }""");

        Assert.Equal(
            ["a[].b[].c[]:3", "plain.d:2"],
            survey.DocumentsByPath.Select(p => $"{p.Key}:{p.Value}").Order(StringComparer.Ordinal));
    }

    [Fact]
    public void Add_DeepestDocumentsTheStoreAccepts_GiveTheirFullPathsAndMarks()
    {
        // Depth counts objects and arrays: 64 objects around a string, or 63 around an array of one.
        var deepest = string.Concat(Enumerable.Repeat("""{"a":""", 64)) + "\"x\"" + new string('}', 64);
        var deepestArray = string.Concat(Enumerable.Repeat("""{"a":""", 63)) + "[\"y\"]" + new string('}', 63);
        DocumentBodies.Validate("d1", Encoding.UTF8.GetBytes(deepest), StoreOptions.DefaultMaxDocumentBytes);
        DocumentBodies.Validate("d2", Encoding.UTF8.GetBytes(deepestArray), StoreOptions.DefaultMaxDocumentBytes);

        var survey = Survey(deepest, deepestArray);

        var path = string.Join('.', Enumerable.Repeat("a", 63));
        Assert.Equal([path + ".a", path + "[]"], survey.DocumentsByPath.Keys.Order(StringComparer.Ordinal));
        Assert.Equal(2, survey.ToDefinition("measure-default", "orders").Fields.Length);
    }

    [Fact]
    public void Add_PropertyNamesAPathCannotSpell_AreSkippedWithTheirSubtreeAndCounted()
    {
        var survey = Survey("""{ "a.b": "x", "c[0]": { "d": "y" }, " padded": "z", "tab\there": "t", "": "e", "fine name": "ok" }""");

        Assert.Equal(["fine name"], survey.DocumentsByPath.Keys);
        Assert.Equal(5, survey.UnspellableProperties);
    }

    [Fact]
    public void Add_PropertyNameEscapingAnUnpairedSurrogate_IsSkippedWithItsSubtreeAndCounted()
    {
        // Strict JSON allows the escape, so the store accepts the body; the name is not Unicode text, so no path names it.
        const string document = """{ "\ud800": "x", "a\udc00b": { "c": "y" }, "ok": "z", "cl\u00e9": "w" }""";
        DocumentBodies.Validate("d1", Encoding.UTF8.GetBytes(document), StoreOptions.DefaultMaxDocumentBytes);

        var survey = Survey(document);

        Assert.Equal(["clé", "ok"], survey.DocumentsByPath.Keys.Order(StringComparer.Ordinal));
        Assert.Equal(2, survey.UnspellableProperties);
    }

    // { "attrs": { "k<first>": "v", ..., "k<first + count - 1>": "v" } }, a map keyed by ids.
    private static string Map(int count, int first = 0)
    {
        var document = new StringBuilder("""{ "attrs": {""");
        for (var i = first; i < first + count; i++)
        {
            document.Append(i == first ? "" : ",").Append("\"k").Append(i).Append("\":\"v\"");
        }

        return document.Append("} }").ToString();
    }

    [Fact]
    public void Add_MoreDistinctPathsThanTracked_StopsTrackingAndCountsTheRest()
    {
        var survey = Survey(Map(StringFieldSurvey.MaxTrackedPaths + 5));

        Assert.Equal(StringFieldSurvey.MaxTrackedPaths, survey.DocumentsByPath.Count);
        Assert.Equal(5, survey.UntrackedStrings);
        Assert.Equal(StringFieldSurvey.DefaultMaxFields, survey.ToDefinition("measure-default", "orders").Fields.Length);
    }

    [Fact]
    public void Add_CommonPathFirstSeenAfterTheTableFilled_IsTrackedAndRankedFirst()
    {
        var survey = Survey([Map(StringFieldSurvey.MaxTrackedPaths + 5), .. Enumerable.Repeat("""{ "title": "t" }""", 2_000)]);

        var definition = survey.ToDefinition("measure-default", "orders");

        Assert.Equal("title", definition.Fields[0].Path);
        // The map's paths, each seen in one document, made room for it.
        Assert.Equal(KeyValuePair.Create("title", 2_000L), Assert.Single(survey.DocumentsByPath));
        Assert.Equal(5, survey.UntrackedStrings);
    }

    [Fact]
    public void Add_TableFull_DropsThePathsSeenInOneEarlierDocumentOnly_AndADroppedPathSeenAgainCountsAgain()
    {
        var survey = Survey(
            Map(StringFieldSurvey.MaxTrackedPaths),
            """{ "attrs": { "k0": "v" }, "title": "t" }""", // k0 is in this document too when title needs room: kept
            """{ "attrs": { "k1": "v" } }""");              // k1 was dropped for title: counts from this document

        Assert.Equal(
            ["attrs.k0:2", "attrs.k1:1", "title:1"],
            survey.DocumentsByPath.Select(p => $"{p.Key}:{p.Value}").Order(StringComparer.Ordinal));
        Assert.Equal(0, survey.UntrackedStrings);
    }

    [Fact]
    public void Add_TableFullOfPathsSeenInTwoDocuments_CountsStringsAtNewPathsAsUntracked()
    {
        var survey = Survey(Map(StringFieldSurvey.MaxTrackedPaths), Map(StringFieldSurvey.MaxTrackedPaths), """{ "title": "t", "more": ["a", "b"] }""");

        Assert.Equal(StringFieldSurvey.MaxTrackedPaths, survey.DocumentsByPath.Count);
        Assert.All(survey.DocumentsByPath.Values, count => Assert.Equal(2, count));
        Assert.Equal(3, survey.UntrackedStrings);
    }

    [Theory]
    [InlineData("\"text\"")]
    [InlineData("[1, 2]")]
    [InlineData("{\"a\": ")]
    public void Add_NotAJsonObject_IsRefusedNamingTheDocument(string json)
    {
        var survey = Survey("""{ "ok": "x" }""");

        var error = Assert.Throws<ArgumentException>(() => survey.Add(Encoding.UTF8.GetBytes(json)));

        Assert.Contains("document #2", error.Message, StringComparison.Ordinal);
        Assert.Equal(1, survey.Documents);
    }

    [Fact]
    public void Add_DocumentRefusedPartway_LeavesTheCountsAsTheyWere()
    {
        var survey = Survey("""{ "ok": "x" }""");

        Assert.Throws<ArgumentException>(() => survey.Add(Encoding.UTF8.GetBytes("""{ "a.b": "u", "new": "y", "ok": ["z"], """)));

        Assert.Equal(["ok:1"], survey.DocumentsByPath.Select(p => $"{p.Key}:{p.Value}"));
        Assert.Equal(0, survey.UnspellableProperties);
        Assert.Equal(["ok"], survey.ToDefinition("measure-default", "orders").Fields.Select(f => f.Path));
    }

    [Fact]
    public void ToDefinition_IndexesEveryStringPathAsTextAndExtractsEveryStringOfTheDocuments()
    {
        const string document = """
            { "title": "Red fox", "tags": ["quick", "brown"], "lines": [ { "product": "hat" }, { "product": "coat" } ],
              "2nd": "second", "__meta": "m", "x-y": "dash", "x_y": "underscore", "size": 4 }
            """;
        var survey = Survey(document);

        var definition = survey.ToDefinition("measure-default", "orders");

        Assert.All(definition.Fields, f => Assert.Equal(IndexFieldType.Text, f.Type));
        Assert.Equal(
            ["f_2nd:2nd", "f__meta:__meta", "lines.product:lines[].product", "tags:tags[]", "title:title", "x_y:x-y", "x_y_2:x_y"],
            definition.Fields.Select(f => $"{f.Name}:{f.Path}").Order(StringComparer.Ordinal));
        var extractor = new FieldExtractor(definition);
        var buffer = extractor.CreateBuffer();
        extractor.Extract(Encoding.UTF8.GetBytes(document), buffer);
        Assert.Equal(["hat", "coat"], buffer.Values("lines.product"));
        Assert.Equal(["quick", "brown"], buffer.Values("tags"));
        Assert.Equal(["dash"], buffer.Values("x_y"));
    }

    [Fact]
    public void ToDefinition_PathWithArraysInSomeDocumentsOnly_IsOneFieldTakingTheValuesOfEveryDocument()
    {
        string[] documents =
        [
            """{ "tags": "x" }""",
            """{ "tags": ["y", "z"] }""",
            """{ "o": { "b": "q" } }""",
            """{ "o": [ { "b": "r" } ] }""",
        ];
        var survey = Survey(documents);

        var definition = survey.ToDefinition("measure-default", "orders");

        Assert.Equal(["o.b:o[].b", "tags:tags[]"], definition.Fields.Select(f => $"{f.Name}:{f.Path}").Order(StringComparer.Ordinal));
        Assert.All(definition.Fields, f => Assert.Equal(2, survey.DocumentsByPath[f.Path]));
        var extractor = new FieldExtractor(definition);
        var buffer = extractor.CreateBuffer();
        var values = new List<string>();
        foreach (var document in documents)
        {
            extractor.Extract(Encoding.UTF8.GetBytes(document), buffer);
            values.AddRange(buffer.Values("tags"));
            values.AddRange(buffer.Values("o.b"));
        }

        Assert.Equal(["x", "y", "z", "q", "r"], values);
    }

    [Fact]
    public void ToDefinition_MoreStringPathsThanFields_KeepsTheMostCommonFirst()
    {
        var survey = Survey(
            """{ "common": "a", "rare": "b", "middle": "c" }""",
            """{ "common": "a", "middle": "c" }""",
            """{ "common": "a" }""");

        var definition = survey.ToDefinition("measure-default", "orders", maxFields: 2);

        Assert.Equal(["common", "middle"], definition.Fields.Select(f => f.Path));
    }

    [Fact]
    public void ToDefinition_LongPaths_GiveValidUniqueNamesWithin64Characters()
    {
        var prefix = new string('a', 70);
        var survey = Survey($$"""{ "{{prefix}}1": "x", "{{prefix}}2": "y", "{{prefix.ToUpperInvariant()}}3": "z" }""");

        var definition = survey.ToDefinition("measure-default", "orders");

        var names = definition.Fields.Select(f => f.Name).ToList();
        Assert.All(names, n => Assert.InRange(n.Length, 1, IndexDefinition.MaxFieldNameLength));
        Assert.Equal(3, names.Distinct(StringComparer.OrdinalIgnoreCase).Count());
    }

    [Fact]
    public void ToDefinition_NoStringAnywhere_SaysSoAndWhatToDo()
    {
        var survey = Survey("""{ "n": 1, "b": [true, null] }""");

        var error = Assert.Throws<IndexDefinitionException>(() => survey.ToDefinition("measure-default", "orders"));

        var problem = Assert.Single(error.Problems);
        Assert.Contains("no string value was found in the 1 documents of collection 'orders'", problem.Message, StringComparison.Ordinal);
        Assert.Contains("definition file", problem.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("title", "title")]
    [InlineData("lines[].product", "lines.product")]
    [InlineData("größe", "gr__e")]
    [InlineData("9lives", "f_9lives")]
    [InlineData("__id", "f__id")]
    public void FieldNameFor_MakesAValidFieldName(string path, string expected)
    {
        Assert.Equal(expected, StringFieldSurvey.FieldNameFor(path));
    }
}
