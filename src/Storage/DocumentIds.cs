using System.Buffers;
using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Text;
using System.Text.Unicode;

namespace Indexing.Storage;

/// <summary>Rules for document ids, their collection part, and their form as store keys.</summary>
/// <remarks>
/// An id is "collection/key" or, for a document in no collection, just "key". Keys are the id's
/// strict UTF-8 bytes, so the store's key order is ordinal UTF-8 byte order (which is Unicode
/// code point order, not .NET's UTF-16 ordinal order; see <see cref="CompareKeyOrder"/>).
/// </remarks>
internal static class DocumentIds
{
    /// <summary>Largest id length in UTF-8 bytes; also the buffer size that fits any key.</summary>
    public const int MaxIdBytes = 512;

    /// <summary>Throws <see cref="DocumentValidationException"/> if <paramref name="id"/> breaks a rule.</summary>
    public static void Validate([NotNull] string? id) => ValidatedByteCount(id);

    /// <summary>Checks <paramref name="id"/> without throwing; <paramref name="error"/> says what was wrong.</summary>
    public static bool TryValidate([NotNullWhen(true)] string? id, [NotNullWhen(false)] out DocumentValidationError? error) =>
        Check(id, out _, out error);

    /// <summary>The part of <paramref name="id"/> before the first '/'; empty when there is no '/'.</summary>
    /// <remarks>
    /// An id without '/' belongs to no collection, rather than being its own collection: a
    /// singleton such as "settings" should not make a one-document collection appear.
    /// The id is not validated here.
    /// </remarks>
    public static ReadOnlySpan<char> GetCollection(ReadOnlySpan<char> id)
    {
        var slash = id.IndexOf('/');
        return slash < 0 ? [] : id[..slash];
    }

    /// <summary>Throws <see cref="ArgumentException"/> unless <paramref name="collection"/> is a collection name: non-empty, no '/'.</summary>
    public static void ValidateCollection(string collection)
    {
        ArgumentNullException.ThrowIfNull(collection);
        if (collection.Length == 0 || collection.Contains('/'))
        {
            throw new ArgumentException(
                $"collection {MessageText.Quote(collection)} is not a collection name; it must be non-empty and contain no '/'. " +
                "Pass the part of an id before its first '/', e.g. 'orders' for 'orders/17'.",
                nameof(collection));
        }
    }

    /// <summary>The store key for <paramref name="id"/>: its UTF-8 bytes. Validates the id first.</summary>
    public static byte[] ToKey(string id)
    {
        var key = new byte[ValidatedByteCount(id)];
        Encode(id, key);
        return key;
    }

    /// <summary>Writes the store key for <paramref name="id"/> into <paramref name="destination"/>; returns its length.</summary>
    /// <remarks>A destination of <see cref="MaxIdBytes"/> bytes always fits.</remarks>
    public static int ToKey(string id, Span<byte> destination)
    {
        var count = ValidatedByteCount(id);
        if (destination.Length < count)
        {
            throw new ArgumentException(
                $"destination has {destination.Length} bytes, but the key for id {MessageText.Quote(id)} is {count} bytes; " +
                $"pass a buffer of at least {nameof(MaxIdBytes)} ({MaxIdBytes}) bytes.",
                nameof(destination));
        }

        Encode(id, destination);
        return count;
    }

    /// <summary>The id a store key was made from.</summary>
    /// <remarks>
    /// Only checks that the key is UTF-8, not the id rules: keys written under looser rules
    /// in the past must still be readable.
    /// </remarks>
    public static string FromKey(ReadOnlySpan<byte> key)
    {
        if (!Utf8.IsValid(key))
        {
            throw new InvalidDataException(
                $"store key of {key.Length} bytes is not valid UTF-8, so {nameof(DocumentIds)}.{nameof(ToKey)} did not write it; " +
                "the key space holds foreign or corrupt keys. Check what else writes to this store.");
        }

        return Encoding.UTF8.GetString(key);
    }

    /// <summary>Compares ids in store key order (ordinal UTF-8 bytes), without encoding them.</summary>
    /// <remarks>
    /// <see cref="string.CompareOrdinal(string, string)"/> differs from key order: UTF-16 puts
    /// characters above U+FFFF (surrogate pairs) before U+E000..U+FFFF, UTF-8 puts them after.
    /// Use this to sort ids into the order the store will hold them.
    /// </remarks>
    public static int CompareKeyOrder(string? x, string? y)
    {
        if (ReferenceEquals(x, y))
        {
            return 0;
        }

        if (x is null || y is null)
        {
            return x is null ? -1 : 1;
        }

        var common = x.AsSpan().CommonPrefixLength(y);
        if (common == x.Length || common == y.Length)
        {
            return x.Length.CompareTo(y.Length);
        }

        return KeyRank(x[common]).CompareTo(KeyRank(y[common]));
    }

    /// <summary>Whether <paramref name="id"/> is valid; if not, the first broken rule reading left to right.</summary>
    /// <remarks>
    /// Stops as soon as the running UTF-8 count passes <see cref="MaxIdBytes"/>, so a huge
    /// id costs no more than a long valid one.
    /// </remarks>
    private static bool Check(
        [NotNullWhen(true)] string? id, out int byteCount, [NotNullWhen(false)] out DocumentValidationError? error)
    {
        error = Problem(id, out byteCount);
        return error is null;
    }

    private static DocumentValidationError? Problem(string? id, out int byteCount)
    {
        byteCount = 0;
        if (string.IsNullOrEmpty(id))
        {
            var what = id is null ? "missing (null)" : "empty";
            return new(id, DocumentValidationRule.IdEmpty,
                $"document id is {what}; an id must be 1 to {MaxIdBytes} UTF-8 bytes, e.g. 'orders/17'. Give the document an id.");
        }

        if (id[0] == '/')
        {
            return new(id, DocumentValidationRule.IdEmptyCollection,
                $"document id {MessageText.Quote(id)} starts with '/', so its collection (the part before the first '/') would be empty; " +
                "ids look like 'orders/17', or 'settings' for a document in no collection. Remove the leading '/'.");
        }

        for (var i = 0; i < id.Length; i++)
        {
            var c = id[i];
            if (char.IsControl(c))
            {
                return new(id, DocumentValidationRule.IdControlCharacter,
                    $"document id {MessageText.Quote(id)} contains control character U+{(int)c:X4} at char index {i}; ids must not contain " +
                    "control characters (U+0000-U+001F, U+007F-U+009F). Remove it, or percent-encode it if it is part of a natural key.");
            }

            if (char.IsSurrogate(c))
            {
                if (!char.IsHighSurrogate(c) || i + 1 == id.Length || !char.IsLowSurrogate(id[i + 1]))
                {
                    return new(id, DocumentValidationRule.IdInvalidUnicode,
                        $"document id {MessageText.Quote(id)} contains an unpaired surrogate U+{(int)c:X4} at char index {i}, which has no UTF-8 form; " +
                        "ids must be valid Unicode text. Fix what built the id (often a string cut in the middle of a character).");
                }

                i++;
                byteCount += 4;
            }
            else
            {
                byteCount += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
            }

            if (byteCount > MaxIdBytes)
            {
                return new(id, DocumentValidationRule.IdTooLong,
                    $"document id {MessageText.Quote(id)} is longer than the limit of {MaxIdBytes} UTF-8 bytes " +
                    "(characters outside ASCII take 2 to 4 bytes each). Use a shorter id and keep long natural keys in the body.");
            }
        }

        return null;
    }

    private static int ValidatedByteCount([NotNull] string? id)
    {
        if (!Check(id, out var count, out var error))
        {
            throw new DocumentValidationException(error);
        }

        return count;
    }

    private static void Encode(string id, Span<byte> destination)
    {
        // The id is validated, so strict encoding cannot meet an unpaired surrogate.
        var status = Utf8.FromUtf16(id, destination, out _, out _, replaceInvalidSequences: false);
        Debug.Assert(status == OperationStatus.Done, $"validated id did not encode: {status}");
    }

    // Lifts surrogates above the rest of the BMP: the characters they encode (U+10000 and up)
    // sort after U+E000..U+FFFF in UTF-8, though their UTF-16 code units sort before. In a
    // valid string the first differing code unit then decides the UTF-8 byte order.
    private static int KeyRank(char c) => char.IsSurrogate(c) ? c + 0x10000 : c;

}
