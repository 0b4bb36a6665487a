using System.Text;

using static Indexing.Indexer.Tests.Extracted;

namespace Indexing.Indexer.Tests;

public sealed class FieldExtractorTests
{
    private const string Order = """
        {
          "number": 1017,
          "customer": { "name": "Zoë Müller", "id": "c-42", "vip": true, "address": { "city": "Berlin", "zip": "10115" } },
          "lines": [
            { "product": "pen", "quantity": 2, "price": 1.5, "options": { "colour": "blue" } },
            { "product": "ink", "quantity": 10, "price": 12.25 },
            { "product": "pad", "quantity": 1, "price": 3 }
          ],
          "tags": [ "gift", "express" ],
          "total": 41.5,
          "paid": false,
          "notes": null
        }
        """;

    private static readonly IndexFieldDefinition[] _orderFields =
    [
        Long("number", "number"),
        Text("customer", "customer.name"),
        Keyword("customer_id", "customer.id"),
        Bool("vip", "customer.vip"),
        Keyword("city", "customer.address.city"),
        Keyword("product", "lines[].product"),
        Long("quantity", "lines[].quantity"),
        Double("price", "lines[].price"),
        Keyword("colour", "lines[].options.colour"),
        Keyword("tags", "tags[]"),
        Double("total", "total"),
        Bool("paid", "paid"),
        Text("notes", "notes"),
        Keyword("carrier", "shipping.carrier"),
    ];

    [Fact]
    public void Extract_OrderDocument_GivesEachFieldItsTypedValues()
    {
        var fields = From(Order, _orderFields);

        Assert.Equal(["1017"], fields.Values("number"));
        Assert.Equal(["Zoë Müller"], fields.Values("customer"));
        Assert.Equal(["c-42"], fields.Values("customer_id"));
        Assert.Equal(["true"], fields.Values("vip"));
        Assert.Equal(["Berlin"], fields.Values("city"));
        Assert.Equal(["2", "10", "1"], fields.Values("quantity"));
        Assert.Equal(["1.5", "12.25", "3"], fields.Values("price"));
        Assert.Equal(["blue"], fields.Values("colour"));
        Assert.Equal(["gift", "express"], fields.Values("tags"));
        Assert.Equal(["41.5"], fields.Values("total"));
        Assert.Equal(["false"], fields.Values("paid"));
        Assert.Equal(0, fields.MismatchCount);
    }

    [Fact]
    public void Extract_ArrayOfObjects_GivesOneValuePerElementInOrder()
    {
        var fields = From(Order, _orderFields);

        Assert.Equal(["pen", "ink", "pad"], fields.Values("product"));
        Assert.Equal(3, fields.Count(_orderFields.ToList().FindIndex(f => f.Name == "product")));
    }

    [Fact]
    public void Extract_NullAndMissingPaths_GiveNoValueAndNoMismatch()
    {
        var fields = From(Order, _orderFields);

        Assert.Empty(fields.Values("notes"));
        Assert.Empty(fields.Values("carrier"));
        Assert.Equal(0, fields.MismatchCount);
    }

    [Fact]
    public void Extract_NullsInsideArrays_AreLeftOut()
    {
        var fields = From("""{ "tags": [ null, "a", null, "b" ], "lines": [ null, { "product": null }, { "product": "pen" } ] }""",
            Keyword("tags", "tags[]"), Keyword("product", "lines[].product"));

        Assert.Equal(["a", "b"], fields.Values("tags"));
        Assert.Equal(["pen"], fields.Values("product"));
        Assert.Equal(0, fields.MismatchCount);
    }

    [Fact]
    public void Extract_ArraysOfArrays_AreFlattenedInDocumentOrder()
    {
        var fields = From("""{ "matrix": [ [1, 2], [3, [4, [5]]], [] ], "groups": [ [ { "name": "a" } ], [ { "name": "b" }, { "name": "c" } ] ] }""",
            Long("cells", "matrix[]"), Keyword("names", "groups[].name"));

        Assert.Equal(["1", "2", "3", "4", "5"], fields.Values("cells"));
        Assert.Equal(["a", "b", "c"], fields.Values("names"));
    }

    [Fact]
    public void Extract_ArrayWithoutMark_IsIteratedLikeAMarkedOne()
    {
        var fields = From(Order, Keyword("marked", "lines[].product"), Keyword("unmarked", "lines.product"));

        Assert.Equal(["pen", "ink", "pad"], fields.Values("unmarked"));
        Assert.Equal(fields.Values("marked"), fields.Values("unmarked"));
    }

    [Fact]
    public void Extract_MarkedPathOnASingleValue_TakesThatValue()
    {
        var fields = From("""{ "tags": "solo", "lines": { "product": "pen" } }""",
            Keyword("tags", "tags[]"), Keyword("product", "lines[].product"));

        Assert.Equal(["solo"], fields.Values("tags"));
        Assert.Equal(["pen"], fields.Values("product"));
    }

    [Fact]
    public void Extract_ScalarWherePathNeedsAnObject_GivesNoValueAndNoMismatch()
    {
        var fields = From("""{ "customer": "Bob", "lines": [ 1, "x", { "product": "pen" } ] }""",
            Text("customer", "customer.name"), Keyword("product", "lines[].product"));

        Assert.Empty(fields.Values("customer"));
        Assert.Equal(["pen"], fields.Values("product"));
        Assert.Equal(0, fields.MismatchCount);
    }

    [Fact]
    public void Extract_WrongValueKinds_AreSkippedAndReportedWithPathAndReason()
    {
        var fields = From("""
            {
              "lines": [ { "quantity": 2 }, { "quantity": "three" }, { "quantity": 1.5 }, { "quantity": { "n": 4 } }, { "quantity": 5 } ],
              "paid": "true",
              "total": 1e400
            }
            """,
            Long("quantity", "lines[].quantity"), Bool("paid", "paid"), Double("total", "total"));

        Assert.Equal(["2", "5"], fields.Values("quantity"));
        Assert.Empty(fields.Values("paid"));
        Assert.Empty(fields.Values("total"));
        Assert.Equal(5, fields.MismatchCount);
        Assert.Equal(
            [("quantity", "lines[1].quantity"), ("quantity", "lines[2].quantity"), ("quantity", "lines[3].quantity"), ("paid", "paid"), ("total", "total")],
            fields.Mismatches.Select(m => (m.Field, m.Path)));
        string[] reasons =
        [
            "the string 'three' is not a number; long fields take JSON numbers",
            "1.5 is not a whole number; long fields take integral numbers",
            "an object is not a long value",
            "the string 'true' is not true or false; bool fields take JSON true and false",
            "1e400 is outside the double range",
        ];
        Assert.All(fields.Mismatches.Zip(reasons), pair => Assert.StartsWith(pair.Second, pair.First.Reason, StringComparison.Ordinal));
    }

    [Fact]
    public void Extract_ObjectAtAFieldWithDeeperFields_ReportsTheFieldAndWalksOn()
    {
        var fields = From(Order, Keyword("customer_raw", "customer"), Text("customer", "customer.name"));

        Assert.Empty(fields.Values("customer_raw"));
        Assert.Equal(["Zoë Müller"], fields.Values("customer"));
        var mismatch = Assert.Single(fields.Mismatches);
        Assert.Equal(("customer_raw", "customer"), (mismatch.Field, mismatch.Path));
        Assert.Contains("an object is not a keyword value", mismatch.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Extract_ManyMismatches_CountsAllAndKeepsTheFirstDetails()
    {
        var json = $$"""{ "values": [ {{string.Join(", ", Enumerable.Range(0, 100).Select(i => $"\"v{i}\""))}} ] }""";

        var fields = From(json, Long("values", "values[]"));

        Assert.Equal(100, fields.MismatchCount);
        Assert.Equal(ExtractedFields.MaxRecordedMismatches, fields.Mismatches.Count);
        Assert.Equal("values[15]", fields.Mismatches[^1].Path);
    }

    [Theory]
    [InlineData("9223372036854775807", "9223372036854775807", null)]
    [InlineData("-9223372036854775808", "-9223372036854775808", null)]
    [InlineData("9223372036854775808", null, "9223372036854775808 is outside the long range -9223372036854775808 to 9223372036854775807")]
    [InlineData("-9223372036854775809", null, "is outside the long range")]
    [InlineData("1.5", null, "1.5 is not a whole number")]
    [InlineData("1e3", "1000", null)]
    [InlineData("2.0", "2", null)]
    [InlineData("true", null, "true is not a number")]
    public void Extract_LongField_TakesWholeNumbersInRangeOnly(string json, string? value, string? reason)
    {
        AssertTakenOrSkipped(Long("n", "n"), json, value, reason);
    }

    [Theory]
    [InlineData("1.5e-3", "0.0015", null)]
    [InlineData("-0.0", "-0", null)]
    [InlineData("9223372036854775808", "9.223372036854776E+18", null)]
    [InlineData("-1e309", null, "-1e309 is outside the double range")]
    [InlineData("\"1.5\"", null, "the string '1.5' is not a number")]
    public void Extract_DoubleField_TakesFiniteNumbers(string json, string? value, string? reason)
    {
        AssertTakenOrSkipped(Double("n", "n"), json, value, reason);
    }

    [Theory]
    [InlineData("1", "the number 1 is not true or false")]
    [InlineData("\"false\"", "the string 'false' is not true or false")]
    public void Extract_BoolField_TakesOnlyTrueAndFalse(string json, string reason)
    {
        var fields = From($$"""{ "b": [ true, {{json}}, false ] }""", Bool("b", "b"));

        Assert.Equal(["true", "false"], fields.Values("b"));
        Assert.Contains(reason, Assert.Single(fields.Mismatches).Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Extract_ScalarsIntoKeywordAndText_TakeTheirJsonTextAsWritten()
    {
        var fields = From("""{ "v": [ "s", 17, 1.50, 1e3, -0, true, false ] }""", Keyword("k", "v"), Text("t", "v"));

        Assert.Equal(["s", "17", "1.50", "1e3", "-0", "true", "false"], fields.Values("k"));
        Assert.Equal(fields.Values("k"), fields.Values("t"));
        Assert.Equal(0, fields.MismatchCount);
    }

    [Fact]
    public void Extract_EscapedStringsAndNames_AreUnescaped()
    {
        var fields = From("""
            { "cl\u00e9": "caf\u00e9 \"quoted\" back\\slash\nnew line\ttab \ud83d\ude00 😀", "a\/b": "slash", "日本": "\u65e5" }
            """,
            Text("t", "clé"), Keyword("k", "a/b"), Keyword("j", "日本"));

        Assert.Equal(["café \"quoted\" back\\slash\nnew line\ttab \U0001F600 \U0001F600"], fields.Values("t"));
        Assert.Equal(["slash"], fields.Values("k"));
        Assert.Equal(["日"], fields.Values("j"));
    }

    [Fact]
    public void Extract_UnpairedSurrogateEscapes_AreMismatchOrNoMatchButNotFatal()
    {
        var fields = From("""{ "t": [ "ok", "bad \ud800 half" ], "x\udc00": "hidden", "k": "after" }""",
            Text("t", "t"), Keyword("k", "k"), Keyword("x", "x"));

        Assert.Equal(["ok"], fields.Values("t"));
        Assert.Equal(["after"], fields.Values("k"));
        Assert.Empty(fields.Values("x"));
        var mismatch = Assert.Single(fields.Mismatches);
        Assert.Equal("t[1]", mismatch.Path);
        Assert.Contains("escapes an unpaired surrogate", mismatch.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Extract_HugeUnrelatedSubtrees_AreSkippedWithoutLeakingValues()
    {
        // Same property names as the fields inside subtrees no path goes through: they must not count.
        var noise = new StringBuilder("[");
        for (var i = 0; i < 20_000; i++)
        {
            noise.Append(i == 0 ? "" : ",").Append($$"""{ "total": {{i}}, "customer": { "name": "noise" }, "deep": [[[{ "x": [1, {"y": "z"}] }]]] }""");
        }

        noise.Append(']');
        var json = $$"""{ "history": {{noise}}, "customer": { "audit": {{noise}}, "name": "Ann" }, "total": 7, "archive": {{noise}} }""";

        var fields = From(json, Text("customer", "customer.name"), Double("total", "total"));

        Assert.True(json.Length > 3_000_000);
        Assert.Equal(["Ann"], fields.Values("customer"));
        Assert.Equal(["7"], fields.Values("total"));
        Assert.Equal(0, fields.MismatchCount);
    }

    [Fact]
    public void Extract_TwoFieldsOnOnePath_BothTakeTheValues()
    {
        var fields = From(Order, Text("name_text", "customer.name"), Keyword("name_exact", "customer.name"));

        Assert.Equal(["Zoë Müller"], fields.Values("name_text"));
        Assert.Equal(["Zoë Müller"], fields.Values("name_exact"));
        Assert.Same(fields.Strings(0)[0], fields.Strings(1)[0]);
    }

    [Fact]
    public void Extract_NumbersAndBoolsIntoAWarmBuffer_AllocateNothing()
    {
        var extractor = new FieldExtractor(Definition(
            Long("quantity", "lines[].quantity"), Double("price", "lines[].price"), Bool("vip", "customer.vip"), Long("number", "number")));
        var buffer = extractor.CreateBuffer();
        var document = Encoding.UTF8.GetBytes(Order);
        extractor.Extract(document, buffer);

        var before = GC.GetAllocatedBytesForCurrentThread();
        for (var i = 0; i < 100; i++)
        {
            extractor.Extract(document, buffer);
        }

        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
        Assert.Equal(["2", "10", "1"], buffer.Values("quantity"));
    }

    [Fact]
    public void Extract_ReusedBuffer_HoldsOnlyTheLastDocument()
    {
        var extractor = new FieldExtractor(Definition(Keyword("tags", "tags[]"), Long("n", "n")));
        var buffer = extractor.CreateBuffer();

        extractor.Extract("""{ "tags": [ "a", "b", "c" ], "n": "bad" }"""u8, buffer);
        extractor.Extract("""{ "tags": [ "d" ] }"""u8, buffer);

        Assert.Equal(["d"], buffer.Values("tags"));
        Assert.Empty(buffer.Values("n"));
        Assert.Equal(0, buffer.MismatchCount);
        Assert.Empty(buffer.Mismatches);
    }

    [Theory]
    [InlineData("{ \"a\": 1, }", "not well-formed JSON at line 1")]
    [InlineData("{ \"a\": [1, 2 }", "not well-formed JSON")]
    [InlineData("[ { \"a\": 1 } ]", "its root is an array, not an object")]
    [InlineData("{ \"a\": 1 } { }", "not well-formed JSON")]
    [InlineData("", "not well-formed JSON")]
    public void Extract_CorruptBody_ThrowsInvalidDataAndLeavesTheBufferEmpty(string json, string message)
    {
        var extractor = new FieldExtractor(Definition(Long("a", "a")));
        var buffer = extractor.CreateBuffer();
        extractor.Extract("""{ "a": 5 }"""u8, buffer);

        var exception = Assert.Throws<InvalidDataException>(() => extractor.Extract(Encoding.UTF8.GetBytes(json), buffer));

        Assert.Contains(message, exception.Message, StringComparison.Ordinal);
        Assert.Empty(buffer.Values("a"));
    }

    [Fact]
    public void Extract_StringThatIsNotUtf8_ThrowsInvalidData()
    {
        var extractor = new FieldExtractor(Definition(Keyword("a", "a")));

        var exception = Assert.Throws<InvalidDataException>(
            () => extractor.Extract([.. "{ \"a\": \""u8, 0xC3, 0x28, .. "\" }"u8], extractor.CreateBuffer()));

        Assert.Contains("not valid UTF-8", exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Extract_BufferOfAnotherDefinition_IsRefused()
    {
        var extractor = new FieldExtractor(Definition(Keyword("a", "a")));
        var other = new ExtractedFields(Definition(Keyword("a", "a")));

        Assert.Throws<ArgumentException>(() => extractor.Extract("{}"u8, other));
    }

    [Fact]
    public void Strings_OnALongField_ThrowsNamingTheFieldAndTheRightReader()
    {
        var fields = From("""{ "n": 1 }""", Long("n", "n"));

        var exception = Assert.Throws<InvalidOperationException>(() => fields.Strings(0).Length);

        Assert.Contains("'n') is a long field", exception.Message, StringComparison.Ordinal);
        Assert.Contains("long with Longs", exception.Message, StringComparison.Ordinal);
    }

    // One value in: either taken as value (reason null), or skipped with a reason containing reason.
    private static void AssertTakenOrSkipped(IndexFieldDefinition field, string json, string? value, string? reason)
    {
        var fields = From($$"""{ "{{field.Path}}": {{json}} }""", field);

        Assert.Equal(value is null ? [] : [value], fields.Values(field.Name));
        if (reason is null)
        {
            Assert.Equal(0, fields.MismatchCount);
        }
        else
        {
            Assert.Contains(reason, Assert.Single(fields.Mismatches).Reason, StringComparison.Ordinal);
        }
    }
}
