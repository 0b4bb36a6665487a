using System.Text;

namespace Indexing.Storage.Tests;

public sealed class DocumentBodiesTests
{
    private const string Id = "orders/17";
    private const long Limit = 1024;

    public static TheoryData<byte[], int, string> InvalidUtf8Bodies => new()
    {
        { [(byte)'{', (byte)'"', (byte)'a', (byte)'"', (byte)':', (byte)'"', 0xC3, 0x28, (byte)'"', (byte)'}'], 6, "C3 28 22 7D" },
        { [0xFF, (byte)'{', (byte)'}'], 0, "FF 7B 7D" },
        { [(byte)'{', (byte)'"', 0xE6, 0x97], 2, "E6 97" },
        { [(byte)'{', (byte)'"', 0xED, 0xA0, 0x80, (byte)'"', (byte)':', (byte)'1', (byte)'}'], 2, "ED A0 80 22" },
    };

    [Theory]
    [InlineData("{}")]
    [InlineData(" \r\n\t{} \n")]
    [InlineData("{\"a\":1}")]
    [InlineData("{\"a\":{\"b\":[1,2.5e3,{\"c\":null}],\"d\":true,\"e\":false},\"f\":\"\"}")]
    [InlineData("{\"name\":\"日本語 é \U0001F600\",\"escaped\":\"\\u00e9\\ud83d\\ude00\\n\"}")]
    [InlineData("{\"a\":-0.0,\"b\":1E-7,\"c\":12345678901234567890123}")]
    public void TryValidate_WellFormedObject_Passes(string json)
    {
        Assert.True(DocumentBodies.TryValidate(Id, Encoding.UTF8.GetBytes(json), Limit, out var error), error?.Message);
        Assert.Null(error);
    }

    [Fact]
    public void TryValidate_NestingAtMaxDepth_Passes()
    {
        Assert.True(DocumentBodies.TryValidate(Id, Nested(64), Limit, out var error), error?.Message);
    }

    [Fact]
    public void TryValidate_OneByteOverLimit_ReportsBodyTooLargeWithBothSizes()
    {
        var body = Encoding.UTF8.GetBytes("{\"a\":\"" + new string('x', 1019) + "\"}");

        var error = Rejected(body);

        Assert.Equal(DocumentValidationRule.BodyTooLarge, error.Rule);
        Assert.Equal(Id, error.Id);
        Assert.Contains(
            "document 'orders/17' is 1.0 KiB (1,027 B) as UTF-8; the limit is 1 KiB (Storage:MaxDocumentBytes)",
            error.Message,
            StringComparison.Ordinal);
    }

    [Fact]
    public void TryValidate_ExactlyAtLimit_Passes()
    {
        var body = Encoding.UTF8.GetBytes("{\"a\":\"" + new string('x', 1016) + "\"}");

        Assert.Equal(Limit, body.Length);
        Assert.True(DocumentBodies.TryValidate(Id, body, Limit, out _));
    }

    [Fact]
    public void TryValidate_OversizedAndInvalidUtf8_ReportsSizeFirst()
    {
        var body = new byte[Limit + 1];
        body.AsSpan().Fill(0xFF);

        var error = Rejected(body);

        Assert.Equal(DocumentValidationRule.BodyTooLarge, error.Rule);
    }

    [Theory]
    [MemberData(nameof(InvalidUtf8Bodies))]
    public void TryValidate_InvalidUtf8_ReportsOffsetAndBytes(byte[] body, int offset, string hex)
    {
        var error = Rejected(body);

        Assert.Equal(DocumentValidationRule.BodyInvalidUtf8, error.Rule);
        Assert.Contains($"document 'orders/17' body is not valid UTF-8 at byte offset {offset} (bytes from there: {hex})", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void TryValidate_ByteOrderMark_IsRejectedNotStripped()
    {
        byte[] body = [0xEF, 0xBB, 0xBF, (byte)'{', (byte)'}'];

        var error = Rejected(body);

        Assert.Equal(DocumentValidationRule.BodyByteOrderMark, error.Rule);
        Assert.Contains("'orders/17' body starts with a UTF-8 byte order mark (EF BB BF)", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("")]
    [InlineData("   \n ")]
    [InlineData("{\"a\":1")]
    [InlineData("{\"a\":")]
    [InlineData("{\"a\":\"unterminated}")]
    [InlineData("{\"a\":1}x")]
    [InlineData("{\"a\":1} {\"b\":2}")]
    [InlineData("{}{}")]
    [InlineData("{\"a\":1 /* comment */}")]
    [InlineData("// comment\n{}")]
    [InlineData("{\"a\":1,}")]
    [InlineData("{\"a\":[1,2,]}")]
    [InlineData("{'a':1}")]
    [InlineData("{\"a\":'x'}")]
    [InlineData("{\"a\":NaN}")]
    [InlineData("{\"a\":Infinity}")]
    [InlineData("{\"a\":01}")]
    [InlineData("{\"a\":tru}")]
    [InlineData("{a:1}")]
    [InlineData("{\"a\":\"raw\ttab\"}")]
    [InlineData("{\"a\":\"\\x\"}")]
    [InlineData("{\"a\" 1}")]
    [InlineData("[1,")]
    [InlineData("}")]
    public void TryValidate_MalformedJson_ReportsBodyMalformedJsonWithPosition(string json)
    {
        var error = Rejected(json);

        Assert.Equal(DocumentValidationRule.BodyMalformedJson, error.Rule);
        Assert.Matches(@"^document 'orders/17' body is not well-formed JSON at line \d+, byte \d+: \S", error.Message);
    }

    [Fact]
    public void TryValidate_NestingOneOverMaxDepth_ReportsBodyMalformedJson()
    {
        var error = Rejected(Nested(65));

        Assert.Equal(DocumentValidationRule.BodyMalformedJson, error.Rule);
        Assert.Contains("64", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("{\"a\":1}x", "line 1, byte 8: 'x' is invalid after a single JSON value")]
    [InlineData("{\n  \"a\": 1,\n  \"b\": }", "line 3, byte 8: '}' is an invalid start of a value")]
    [InlineData("{\"a\":1,}", "line 1, byte 8: ")]
    [InlineData("", "line 1, byte 1: ")]
    public void TryValidate_MalformedJson_GivesOneBasedLineAndByte(string json, string expected)
    {
        var error = Rejected(json);

        Assert.Contains(expected, error.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("LineNumber", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("{\"a\":1,}")]
    [InlineData("")]
    public void TryValidate_ReaderMessageWithProgrammerAdvice_LeavesAdviceOut(string json)
    {
        var error = Rejected(json);

        Assert.DoesNotContain("reader options", error.Message, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("isFinalBlock", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("[]", "an array")]
    [InlineData("[{\"a\":1}]", "an array")]
    [InlineData("\"text\"", "a string")]
    [InlineData("42", "a number")]
    [InlineData("true", "a boolean")]
    [InlineData("null", "null")]
    public void TryValidate_NonObjectRoot_ReportsBodyNotObjectNamingTheRoot(string json, string root)
    {
        var error = Rejected(json);

        Assert.Equal(DocumentValidationRule.BodyNotObject, error.Rule);
        Assert.Contains($"document 'orders/17' body is {root}, not a JSON object", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Validate_BadBody_ThrowsExceptionCarryingIdAndRule()
    {
        var thrown = Assert.Throws<DocumentValidationException>(() => DocumentBodies.Validate(Id, "[]"u8, Limit));

        Assert.Equal(Id, thrown.DocumentId);
        Assert.Equal(DocumentValidationRule.BodyNotObject, thrown.Rule);
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(-1L)]
    [InlineData(1L << 40)]
    public void TryValidate_UnusableLimit_ThrowsArgumentOutOfRange(long limit)
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => DocumentBodies.TryValidate(Id, "{}"u8, limit, out _));
    }

    [Fact]
    public void ToUtf8_ValidString_ReturnsItsUtf8Bytes()
    {
        const string json = "{\"name\":\"日本語 é \U0001F600\"}";

        Assert.Equal(Encoding.UTF8.GetBytes(json), DocumentBodies.ToUtf8(Id, json, Limit));
    }

    [Theory]
    [InlineData("x", 2000, "2.0 KiB (2,008 B)")]
    [InlineData("日", 400, "1.2 KiB (1,208 B)")]
    public void TryToUtf8_OverLimit_ReportsExactUtf8Size(string unit, int repeat, string shown)
    {
        var json = "{\"a\":\"" + new StringBuilder().Insert(0, unit, repeat) + "\"}";

        Assert.False(DocumentBodies.TryToUtf8(Id, json, Limit, out var bytes, out var error));

        Assert.Null(bytes);
        Assert.Equal(DocumentValidationRule.BodyTooLarge, error.Rule);
        Assert.Contains($"is {shown} as UTF-8; the limit is 1 KiB", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void TryToUtf8_UnpairedSurrogate_ReportsBodyInvalidUtf8WithCharIndex()
    {
        var json = "{\"a\":\"x\uD800\"}";

        Assert.False(DocumentBodies.TryToUtf8(Id, json, Limit, out _, out var error));

        Assert.Equal(DocumentValidationRule.BodyInvalidUtf8, error.Rule);
        Assert.Contains("unpaired surrogate U+D800 at char index 7", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void TryToUtf8_UnpairedSurrogateInOversizedBody_ReportsSizeFirst()
    {
        var json = "{\"a\":\"\uDC00" + new string('日', 400) + "\"}";

        Assert.False(DocumentBodies.TryToUtf8(Id, json, Limit, out _, out var error));

        Assert.Equal(DocumentValidationRule.BodyTooLarge, error.Rule);
    }

    [Theory]
    [InlineData("\uFEFF{}", DocumentValidationRule.BodyByteOrderMark)]
    [InlineData("{\"a\":1,}", DocumentValidationRule.BodyMalformedJson)]
    [InlineData("[]", DocumentValidationRule.BodyNotObject)]
    public void ToUtf8_BadString_ThrowsWithByteRule(string json, DocumentValidationRule rule)
    {
        var thrown = Assert.Throws<DocumentValidationException>(() => DocumentBodies.ToUtf8(Id, json, Limit));

        Assert.Equal(rule, thrown.Rule);
    }

    private static DocumentValidationError Rejected(string json) => Rejected(Encoding.UTF8.GetBytes(json));

    private static DocumentValidationError Rejected(byte[] body)
    {
        Assert.False(DocumentBodies.TryValidate(Id, body, Limit, out var error));
        Assert.Equal(Id, error.Id);
        return error;
    }

    // An object holding arrays nested so that the whole body is `depth` levels deep.
    private static byte[] Nested(int depth) =>
        Encoding.UTF8.GetBytes("{\"a\":" + new string('[', depth - 1) + new string(']', depth - 1) + "}");
}
