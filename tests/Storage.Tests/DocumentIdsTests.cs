using System.Text;
using System.Text.RegularExpressions;

namespace Indexing.Storage.Tests;

public sealed class DocumentIdsTests
{
    [Theory]
    [InlineData("orders/17")]
    [InlineData("orders/17/lines")]
    [InlineData("settings")]
    [InlineData("a")]
    [InlineData("orders/")]
    [InlineData("commandes/é/日本/\U0001F600")]
    [InlineData("path\\with\\backslashes and spaces")]
    public void Validate_ValidId_DoesNotThrow(string id)
    {
        DocumentIds.Validate(id);

        Assert.True(DocumentIds.TryValidate(id, out var error));
        Assert.Null(error);
    }

    [Theory]
    [InlineData(null, "missing (null)")]
    [InlineData("", "empty")]
    public void TryValidate_NullOrEmpty_ReportsIdEmpty(string? id, string described)
    {
        Assert.False(DocumentIds.TryValidate(id, out var error));

        Assert.Equal(DocumentValidationRule.IdEmpty, error.Rule);
        Assert.Equal(id, error.Id);
        Assert.Contains($"document id is {described}", error.Message, StringComparison.Ordinal);
    }

    // One unit of each UTF-8 length: ids made of them have far fewer chars than bytes.
    public static TheoryData<string> UnitsOfEachUtf8Length => ["a", "é", "日", "\U0001F600"];

    [Theory]
    [MemberData(nameof(UnitsOfEachUtf8Length))]
    public void Validate_IdOfExactly512Utf8Bytes_IsAccepted(string unit)
    {
        var id = IdOfUtf8Bytes(unit, 512);

        DocumentIds.Validate(id);

        Assert.Equal(512, DocumentIds.ToKey(id).Length);
    }

    [Theory]
    [MemberData(nameof(UnitsOfEachUtf8Length))]
    public void TryValidate_IdOf513Utf8Bytes_ReportsIdTooLongWithByteCount(string unit)
    {
        var id = IdOfUtf8Bytes(unit, 513);

        Assert.False(DocumentIds.TryValidate(id, out var error));

        Assert.Equal(DocumentValidationRule.IdTooLong, error.Rule);
        Assert.Contains("...' (truncated; 513 UTF-8 bytes) is longer than the limit of 512 UTF-8 bytes", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void TryValidate_HugeId_TruncatesIdInMessageAndGivesByteLength()
    {
        var id = "orders/" + new string('x', 10_000);

        Assert.False(DocumentIds.TryValidate(id, out var error));

        Assert.Equal(DocumentValidationRule.IdTooLong, error.Rule);
        Assert.Contains("'orders/xxx", error.Message, StringComparison.Ordinal);
        Assert.Contains("...' (truncated; 10,007 UTF-8 bytes)", error.Message, StringComparison.Ordinal);
        Assert.True(error.Message.Length < 500, error.Message);
    }

    [Theory]
    [InlineData("a\0b", "U+0000", 1, @"'a\u0000b'")]
    [InlineData("orders/\n17", "U+000A", 7, @"'orders/\u000A17'")]
    [InlineData("\t", "U+0009", 0, @"'\u0009'")]
    [InlineData("del\u007f", "U+007F", 3, @"'del\u007F'")]
    [InlineData("next\u0085line", "U+0085", 4, @"'next\u0085line'")]
    [InlineData("c1\u009f", "U+009F", 2, @"'c1\u009F'")]
    public void TryValidate_ControlCharacter_ReportsCodePointIndexAndEscapedId(
        string id, string codePoint, int index, string quoted)
    {
        Assert.False(DocumentIds.TryValidate(id, out var error));

        Assert.Equal(DocumentValidationRule.IdControlCharacter, error.Rule);
        Assert.Contains($"document id {quoted} contains control character {codePoint} at char index {index}", error.Message, StringComparison.Ordinal);
    }

    // xunit turns unpaired surrogates in attribute strings into U+FFFD, so the ids come escaped.
    [Theory]
    [InlineData(@"a\uD800", "U+D800", 1)]
    [InlineData(@"\uDC00a", "U+DC00", 0)]
    [InlineData(@"a\uD83Db", "U+D83D", 1)]
    [InlineData(@"x\uDE00\uD83D", "U+DE00", 1)]
    public void TryValidate_UnpairedSurrogate_ReportsIdInvalidUnicode(string escapedId, string codePoint, int index)
    {
        var id = Regex.Unescape(escapedId);

        Assert.False(DocumentIds.TryValidate(id, out var error));

        Assert.Equal(DocumentValidationRule.IdInvalidUnicode, error.Rule);
        Assert.Contains($"unpaired surrogate {codePoint} at char index {index}", error.Message, StringComparison.Ordinal);
        Assert.Contains(@"\u" + codePoint[2..], error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("/orders/17")]
    [InlineData("/")]
    [InlineData("//")]
    public void TryValidate_LeadingSlash_ReportsIdEmptyCollection(string id)
    {
        Assert.False(DocumentIds.TryValidate(id, out var error));

        Assert.Equal(DocumentValidationRule.IdEmptyCollection, error.Rule);
        Assert.Contains($"document id '{id}' starts with '/'", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Validate_InvalidId_ThrowsExceptionCarryingTheError()
    {
        var thrown = Assert.Throws<DocumentValidationException>(() => DocumentIds.Validate("/x"));

        Assert.Equal("/x", thrown.DocumentId);
        Assert.Equal(DocumentValidationRule.IdEmptyCollection, thrown.Rule);
        Assert.Equal(thrown.Error.Message, thrown.Message);
    }

    [Fact]
    public void Validate_BidiOverrideAndQuoteInId_AreEscapedInMessage()
    {
        var thrown = Assert.Throws<DocumentValidationException>(() => DocumentIds.Validate("it's\u202E\0"));

        Assert.Contains(@"'it\'s\u202E\u0000'", thrown.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("\u202E", thrown.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("orders/17", "orders")]
    [InlineData("orders/17/lines", "orders")]
    [InlineData("singleton", "")]
    [InlineData("orders/", "orders")]
    [InlineData("日本/1", "日本")]
    public void GetCollection_Id_ReturnsPartBeforeFirstSlash(string id, string expected)
    {
        Assert.Equal(expected, DocumentIds.GetCollection(id).ToString());
    }

    [Theory]
    [InlineData("orders/17")]
    [InlineData("é")]
    [InlineData("commandes/日本/\U0001F600")]
    public void ToKey_ValidId_IsStrictUtf8AndRoundTrips(string id)
    {
        var key = DocumentIds.ToKey(id);

        Assert.Equal(Encoding.UTF8.GetBytes(id), key);
        Assert.Equal(id, DocumentIds.FromKey(key));
    }

    [Fact]
    public void ToKey_SpanDestination_WritesSameBytesAndReturnsLength()
    {
        Span<byte> buffer = stackalloc byte[DocumentIds.MaxIdBytes];

        var written = DocumentIds.ToKey("orders/é", buffer);

        Assert.Equal(DocumentIds.ToKey("orders/é"), buffer[..written].ToArray());
    }

    [Fact]
    public void ToKey_DestinationTooSmall_ThrowsNamingSizes()
    {
        var buffer = new byte[4];

        var thrown = Assert.Throws<ArgumentException>(() => DocumentIds.ToKey("orders/17", buffer));

        Assert.Equal("destination", thrown.ParamName);
        Assert.Contains("destination has 4 bytes, but the key for id 'orders/17' is 9 bytes", thrown.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(@"a\uD800")]
    [InlineData("")]
    [InlineData("/a")]
    public void ToKey_InvalidId_ThrowsValidationException(string escapedId)
    {
        var id = Regex.Unescape(escapedId);

        Assert.Throws<DocumentValidationException>(() => DocumentIds.ToKey(id));
        Assert.Throws<DocumentValidationException>(() => DocumentIds.ToKey(id, new byte[DocumentIds.MaxIdBytes]));
    }

    [Fact]
    public void FromKey_InvalidUtf8_ThrowsInvalidData()
    {
        var thrown = Assert.Throws<InvalidDataException>(() => DocumentIds.FromKey([0x61, 0xC3, 0x28]));

        Assert.Contains("store key of 3 bytes is not valid UTF-8", thrown.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("\uFFFD", "\U0001F600", -1)]
    [InlineData("\uE000", "\U00010000", -1)]
    [InlineData("a\uFFFF", "a\U0010FFFF", -1)]
    [InlineData("\U0001F600", "\U0001F601", -1)]
    [InlineData("a", "ab", -1)]
    [InlineData("Z", "a", -1)]
    [InlineData("z", "é", -1)]
    [InlineData("orders/10", "orders/2", -1)]
    [InlineData("same", "same", 0)]
    public void CompareKeyOrder_TrickyPairs_MatchesKeyByteOrder(string x, string y, int expected)
    {
        var byKey = Math.Sign(DocumentIds.ToKey(x).AsSpan().SequenceCompareTo(DocumentIds.ToKey(y)));

        Assert.Equal(expected, byKey);
        Assert.Equal(expected, Math.Sign(DocumentIds.CompareKeyOrder(x, y)));
        Assert.Equal(-expected, Math.Sign(DocumentIds.CompareKeyOrder(y, x)));
    }

    [Fact]
    public void CompareKeyOrder_SurrogatePairAgainstHighBmp_DiffersFromUtf16Ordinal()
    {
        // The reason CompareKeyOrder exists: .NET's ordinal order is not the store's order.
        Assert.True(string.CompareOrdinal("\uFFFD", "\U0001F600") > 0);
        Assert.True(DocumentIds.CompareKeyOrder("\uFFFD", "\U0001F600") < 0);
    }

    [Fact]
    public void CompareKeyOrder_RandomIds_SortsLikeKeyBytes()
    {
        var random = new Random(1234);
        string[] alphabet = ["a", "z", "/", "é", "\u07FF", "\u0800", "日", "\uE000", "\uFFFD", "\U00010000", "\U0001F600", "\U0010FFFF"];
        var ids = new List<string>();
        for (var i = 0; i < 500; i++)
        {
            var id = new StringBuilder("k");
            for (var length = random.Next(1, 6); length > 0; length--)
            {
                id.Append(alphabet[random.Next(alphabet.Length)]);
            }

            ids.Add(id.ToString());
        }

        var byComparer = ids.Order(Comparer<string>.Create(DocumentIds.CompareKeyOrder)).ToList();
        var byBytes = ids.Select(DocumentIds.ToKey)
            .Order(Comparer<byte[]>.Create((x, y) => x.AsSpan().SequenceCompareTo(y)))
            .Select(key => DocumentIds.FromKey(key))
            .ToList();

        Assert.Equal(byBytes, byComparer);
    }

    // As many copies of unit as fit in `bytes` UTF-8 bytes, topped up with ASCII to exactly that many.
    private static string IdOfUtf8Bytes(string unit, int bytes)
    {
        var copies = bytes / Encoding.UTF8.GetByteCount(unit);
        var id = new StringBuilder().Insert(0, unit, copies);
        return id.Append('x', bytes - Encoding.UTF8.GetByteCount(id.ToString())).ToString();
    }
}
