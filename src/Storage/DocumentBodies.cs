using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.Unicode;

namespace Indexing.Storage;

/// <summary>Rules for document bodies, checked before anything is written.</summary>
/// <remarks>
/// Rules apply in this order, and the first broken one is reported: size within the limit,
/// valid UTF-8, no byte order mark, one well-formed JSON value (no comments, no trailing commas,
/// depth at most 64, nothing after it), and that value is an object.
/// <para>
/// A UTF-8 byte order mark is rejected rather than stripped: the store hands bodies back byte
/// for byte, so stripping would store something other than what the client sent (breaking any
/// hash it keeps), while keeping it would serve bodies that RFC 8259 forbids and
/// <see cref="Utf8JsonReader"/> refuses.
/// </para>
/// </remarks>
internal static class DocumentBodies
{
    /// <summary>Deepest nesting of objects and arrays a body may have.</summary>
    public const int MaxDepth = 64;

    private const int MaxPooledBufferBytes = 1 << 20;

    /// <summary>
    /// The reader settings bodies are checked with (strict RFC 8259, at most <see cref="MaxDepth"/>
    /// deep); readers of stored bodies use the same, so a body the store took reads the same there.
    /// </summary>
    public static JsonReaderOptions ReaderOptions { get; } = new()
    {
        CommentHandling = JsonCommentHandling.Disallow,
        AllowTrailingCommas = false,
        MaxDepth = MaxDepth,
    };

    /// <summary>Throws <see cref="DocumentValidationException"/> if the body breaks a rule.</summary>
    public static void Validate(string id, ReadOnlySpan<byte> utf8Json, long maxDocumentBytes)
    {
        if (!TryValidate(id, utf8Json, maxDocumentBytes, out var error))
        {
            throw new DocumentValidationException(error);
        }
    }

    /// <summary>Checks the body without throwing; <paramref name="error"/> says what was wrong.</summary>
    public static bool TryValidate(
        string id, ReadOnlySpan<byte> utf8Json, long maxDocumentBytes, [NotNullWhen(false)] out DocumentValidationError? error)
    {
        CheckLimit(maxDocumentBytes);
        error = Problem(id, utf8Json, maxDocumentBytes);
        return error is null;
    }

    /// <summary>Encodes a string body as UTF-8 and validates it; returns the bytes to store.</summary>
    public static byte[] ToUtf8(string id, string json, long maxDocumentBytes)
    {
        if (!TryToUtf8(id, json, maxDocumentBytes, out var utf8Json, out var error))
        {
            throw new DocumentValidationException(error);
        }

        return utf8Json;
    }

    /// <summary>Encodes a string body as UTF-8 and validates it without throwing.</summary>
    /// <remarks>
    /// Encodes once, into a buffer no larger than the limit: an oversized string is never
    /// encoded whole. An unpaired surrogate is reported as <see cref="DocumentValidationRule.BodyInvalidUtf8"/>.
    /// </remarks>
    public static bool TryToUtf8(
        string id,
        string json,
        long maxDocumentBytes,
        [NotNullWhen(true)] out byte[]? utf8Json,
        [NotNullWhen(false)] out DocumentValidationError? error)
    {
        ArgumentNullException.ThrowIfNull(json);
        CheckLimit(maxDocumentBytes);
        utf8Json = null;

        // Each char is at least one UTF-8 byte, so a string longer than the limit cannot fit.
        if (json.Length > maxDocumentBytes)
        {
            error = TooLarge(id, Utf8Length(json), maxDocumentBytes);
            return false;
        }

        // Each char is at most three UTF-8 bytes (a surrogate pair is four for two chars).
        var capacity = (int)Math.Min(Math.Min(3L * json.Length, maxDocumentBytes + 1), Array.MaxLength);
        // Only small buffers come from the shared pool: it keeps what it is given back (up to
        // 1 GiB arrays) until memory pressure, and a bulk load of large bodies must not leave
        // hundreds of MiB parked there.
        var pooled = capacity <= MaxPooledBufferBytes;
        var buffer = pooled ? ArrayPool<byte>.Shared.Rent(capacity) : new byte[capacity];
        try
        {
            var status = Utf8.FromUtf16(json, buffer.AsSpan(0, capacity), out var read, out var written, replaceInvalidSequences: false);
            if (status != OperationStatus.Done)
            {
                // The size rule comes first, so an unpaired surrogate in an oversized body reports the size.
                var size = written + Utf8Length(json.AsSpan(read));
                error = status == OperationStatus.DestinationTooSmall || size > maxDocumentBytes
                    ? TooLarge(id, size, maxDocumentBytes)
                    : new(id, DocumentValidationRule.BodyInvalidUtf8,
                        $"document {MessageText.Quote(id)} body contains an unpaired surrogate U+{(int)json[read]:X4} at char index {read}, " +
                        "which has no UTF-8 form; bodies must be valid Unicode text. Fix what built the string (often text cut in the middle of a character).");
                return false;
            }

            var bytes = buffer.AsSpan(0, written);
            error = written > maxDocumentBytes ? TooLarge(id, written, maxDocumentBytes) : ShapeProblem(id, bytes);
            if (error is not null)
            {
                return false;
            }

            utf8Json = bytes.ToArray();
            return true;
        }
        finally
        {
            if (pooled)
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
        }
    }

    private static void CheckLimit(long maxDocumentBytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxDocumentBytes);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(maxDocumentBytes, Array.MaxLength);
    }

    private static DocumentValidationError? Problem(string id, ReadOnlySpan<byte> utf8Json, long maxDocumentBytes)
    {
        if (utf8Json.Length > maxDocumentBytes)
        {
            return TooLarge(id, utf8Json.Length, maxDocumentBytes);
        }

        if (!Utf8.IsValid(utf8Json))
        {
            var offset = FirstInvalidUtf8(utf8Json);
            var sample = utf8Json.Slice(offset, Math.Min(4, utf8Json.Length - offset));
            return new(id, DocumentValidationRule.BodyInvalidUtf8,
                $"document {MessageText.Quote(id)} body is not valid UTF-8 at byte offset {offset} (bytes from there: {FormatHex(sample)}); " +
                "bodies must be UTF-8 JSON. Re-encode it as UTF-8 (a Latin-1 or UTF-16 file is the usual cause).");
        }

        return ShapeProblem(id, utf8Json);
    }

    // The rules after size and encoding: no byte order mark, strict JSON, an object at the root.
    // TryToUtf8 calls this directly: its strict encoder already produced valid UTF-8, and
    // checking that again would be a second pass over every string body on the write path.
    private static DocumentValidationError? ShapeProblem(string id, ReadOnlySpan<byte> utf8Json)
    {
        if (utf8Json.StartsWith("\uFEFF"u8))
        {
            return new(id, DocumentValidationRule.BodyByteOrderMark,
                $"document {MessageText.Quote(id)} body starts with a UTF-8 byte order mark (EF BB BF); bodies are stored and served byte " +
                "for byte and JSON forbids the mark. Remove those 3 bytes (save the file as UTF-8 without BOM).");
        }

        return JsonProblem(id, utf8Json);
    }

    private static DocumentValidationError? JsonProblem(string id, ReadOnlySpan<byte> utf8Json)
    {
        var reader = new Utf8JsonReader(utf8Json, ReaderOptions);
        JsonTokenType root;
        try
        {
            // On a final block the reader throws, rather than returning false, for empty input
            // and for anything after the root value, so reading to the end checks both.
            reader.Read();
            root = reader.TokenType;
            while (reader.Read())
            {
            }
        }
        catch (JsonException exception)
        {
            var line = (exception.LineNumber ?? 0) + 1;
            var column = (exception.BytePositionInLine ?? 0) + 1;
            return new(id, DocumentValidationRule.BodyMalformedJson,
                $"document {MessageText.Quote(id)} body is not well-formed JSON at line {line}, byte {column}: {Reason(exception)}. " +
                $"Bodies are strict JSON (no comments, trailing commas, single quotes or NaN; depth at most {MaxDepth}); fix the body at that position.");
        }

        if (root == JsonTokenType.StartObject)
        {
            return null;
        }

        var what = root switch
        {
            JsonTokenType.StartArray => "an array",
            JsonTokenType.String => "a string",
            JsonTokenType.Number => "a number",
            JsonTokenType.True or JsonTokenType.False => "a boolean",
            JsonTokenType.Null => "null",
            _ => root.ToString(),
        };
        return new(id, DocumentValidationRule.BodyNotObject,
            $"document {MessageText.Quote(id)} body is {what}, not a JSON object; a document body must be an object {{...}}. " +
            "Wrap the value in an object, e.g. {\"value\": ...}.");
    }

    private static DocumentValidationError TooLarge(string id, long size, long maxDocumentBytes) =>
        new(id, DocumentValidationRule.BodyTooLarge,
            $"document {MessageText.Quote(id)} is {ByteSize.FormatExact(size)} as UTF-8; the limit is {ByteSize.FormatExact(maxDocumentBytes)} " +
            $"({StoreOptions.MaxDocumentBytesName}). Split the document, move large binary data out of it, or raise {StoreOptions.MaxDocumentBytesName}.");

    // The reader's message ends with its own " LineNumber: 0 | BytePositionInLine: 9." suffix,
    // which the caller replaces with one-based figures, and some messages carry advice meant
    // for the programmer holding the reader, not for whoever wrote the body.
    private static string Reason(JsonException exception)
    {
        var message = exception.Message;
        var suffix = message.IndexOf(" LineNumber:", StringComparison.Ordinal);
        return (suffix < 0 ? message : message[..suffix])
            .Replace(" Change the reader options.", "", StringComparison.Ordinal)
            .Replace(", when isFinalBlock is true", "", StringComparison.Ordinal)
            .TrimEnd('.', ' ');
    }

    private static int FirstInvalidUtf8(ReadOnlySpan<byte> utf8)
    {
        Span<char> scratch = stackalloc char[1024];
        var offset = 0;
        OperationStatus status;
        do
        {
            status = Utf8.ToUtf16(utf8[offset..], scratch, out var read, out _, replaceInvalidSequences: false);
            offset += read;
        }
        while (status == OperationStatus.DestinationTooSmall);

        return offset;
    }

    private static string FormatHex(ReadOnlySpan<byte> bytes)
    {
        var text = new StringBuilder(bytes.Length * 3);
        foreach (var b in bytes)
        {
            text.Append(CultureInfo.InvariantCulture, $"{b:X2} ");
        }

        return text.ToString().TrimEnd();
    }

    // Exact UTF-8 length, counting an unpaired surrogate as its 3-byte replacement. Only error
    // messages need it, and counting does not allocate; chunks keep the int count from overflowing.
    private static long Utf8Length(ReadOnlySpan<char> chars)
    {
        const int Chunk = 1 << 20;
        long total = 0;
        while (!chars.IsEmpty)
        {
            var take = Math.Min(chars.Length, Chunk);
            if (take < chars.Length && char.IsHighSurrogate(chars[take - 1]))
            {
                take--;
            }

            total += Encoding.UTF8.GetByteCount(chars[..take]);
            chars = chars[take..];
        }

        return total;
    }
}
