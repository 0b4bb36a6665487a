using System.Globalization;
using System.Text;
using System.Text.Json;

using Indexing.Storage;

namespace Indexing.Indexer;

// What each field type takes from a JSON scalar, and why it refuses the rest.
//
// text, keyword: strings, unescaped. Numbers and true/false too, as their JSON text exactly as
//   written ("1.50" stays "1.50", "1e3" stays "1e3"), like Elasticsearch's coercion: an id held
//   as 17 in some documents and "17" in others is found by either. The text is not normalised,
//   because no number formatting round-trips both every long and every double.
// long: numbers whose exact value is a whole number in the long range, however written
//   (1e3, 1000.0); see JsonIntegers. 1.5 and 9223372036854775808 are mismatches. Strings are
//   never parsed ("007" and "7" would collide), so "42" is a mismatch.
// double: any number whose value is within the double range (1e400 is a mismatch; values too
//   small to represent become 0, and integers above 2^53 round, as doubles do).
// bool: true and false only; "true" (a string) and 1 are mismatches.
// Any type: an object is a mismatch (arrays are iterated, null gives nothing).
//
// Changing any of this changes what existing indexes would hold: raise
// IndexDefinition.CanonicalFormVersion so they are rebuilt.
internal sealed partial class FieldExtractor
{
    private const int MaxShownValueBytes = 40;

    // The reader is on a scalar other than null; the node has at least one field.
    private void TakeScalar(ref Utf8JsonReader reader, PathNode node, ExtractedFields into)
    {
        // Decoded once for all the text and keyword fields on this path.
        string? text = null;
        foreach (var field in node.Fields)
        {
            var type = _types[field];
            var token = reader.TokenType;
            switch (type)
            {
                case IndexFieldType.Text when into.TryAddLargeText(field, ref reader):
                    continue;

                case IndexFieldType.Text or IndexFieldType.Keyword:
                    text ??= AsText(ref reader);
                    if (text is not null)
                    {
                        into.Add(field, text);
                        continue;
                    }

                    break;

                case IndexFieldType.Long when token == JsonTokenType.Number:
                    if (reader.TryGetInt64(out var integer) ||
                        JsonIntegers.Parse(reader.ValueSpan, out integer) == IntegralResult.Integral)
                    {
                        into.Add(field, integer);
                        continue;
                    }

                    break;

                case IndexFieldType.Double when token == JsonTokenType.Number:
                    // TryGetDouble gives infinity, not false, for numbers beyond the double range.
                    if (reader.TryGetDouble(out var real) && double.IsFinite(real))
                    {
                        into.Add(field, real);
                        continue;
                    }

                    break;

                case IndexFieldType.Bool when token is JsonTokenType.True or JsonTokenType.False:
                    into.Add(field, token == JsonTokenType.True);
                    continue;
            }

            if (into.CountMismatch())
            {
                into.RecordMismatch(field, ScalarReason(ref reader, type));
            }
        }
    }

    private void ObjectMismatch(PathNode node, ExtractedFields into)
    {
        foreach (var field in node.Fields)
        {
            if (into.CountMismatch())
            {
                into.RecordMismatch(field,
                    $"an object is not a {IndexFieldTypes.Name(_types[field])} value; the path must lead to a value, " +
                    "e.g. 'customer.name' rather than 'customer'");
            }
        }
    }

    // Null for a string that is not Unicode text (see StringOrNull).
    private static string? AsText(ref Utf8JsonReader reader) => reader.TokenType switch
    {
        JsonTokenType.String => StringOrNull(ref reader),
        JsonTokenType.True => "true",
        JsonTokenType.False => "false",
        // Number tokens are ASCII and never escaped.
        _ => Encoding.UTF8.GetString(reader.ValueSpan),
    };

    // The unescaped string, or null when it escapes an unpaired surrogate ("\ud800"): strict
    // JSON reading (and so the store's body check) accepts such an escape, but it is not
    // Unicode text and GetString refuses it. Invalid UTF-8, which the store does refuse, still
    // throws, and Extract reports the body as corrupt.
    private static string? StringOrNull(ref Utf8JsonReader reader)
    {
        if (!reader.ValueIsEscaped)
        {
            return reader.GetString();
        }

        try
        {
            return reader.GetString();
        }
        catch (InvalidOperationException exception) when (exception.InnerException is not DecoderFallbackException)
        {
            return null;
        }
    }

    private static string ScalarReason(ref Utf8JsonReader reader, IndexFieldType type)
    {
        var shown = Shown(ref reader);
        switch (reader.TokenType)
        {
            case JsonTokenType.Number:
                return type switch
                {
                    IndexFieldType.Long when JsonIntegers.Parse(reader.ValueSpan, out _) == IntegralResult.Fractional =>
                        $"{shown} is not a whole number; long fields take integral numbers (use a double field for fractions)",
                    IndexFieldType.Long =>
                        string.Create(CultureInfo.InvariantCulture,
                            $"{shown} is outside the long range {long.MinValue} to {long.MaxValue}; use a double field for larger numbers"),
                    IndexFieldType.Double =>
                        $"{shown} is outside the double range (about -1.8e308 to 1.8e308)",
                    _ => $"the number {shown} is not true or false; bool fields take JSON true and false",
                };

            case JsonTokenType.String when type is IndexFieldType.Text or IndexFieldType.Keyword:
                return $"the string {shown} escapes an unpaired surrogate, which is not Unicode text; fix the escape (a surrogate pair, e.g. \\ud83d\\ude00, or the character itself)";
        }

        var what = reader.TokenType == JsonTokenType.String ? $"the string {shown}" : shown;
        return type == IndexFieldType.Bool
            ? $"{what} is not true or false; bool fields take JSON true and false (not strings or numbers)"
            : $"{what} is not a number; {IndexFieldTypes.Name(type)} fields take JSON numbers (strings are not parsed)";
    }

    // The value as the document has it (strings unescaped where they can be), cut to a readable length.
    private static string Shown(ref Utf8JsonReader reader)
    {
        if (reader.TokenType == JsonTokenType.String && StringOrNull(ref reader) is { } text)
        {
            return MessageText.Quote(text);
        }

        var raw = reader.ValueSpan;
        var cut = raw.Length <= MaxShownValueBytes
            ? Encoding.UTF8.GetString(raw)
            : $"{Encoding.UTF8.GetString(raw[..MaxShownValueBytes])}... ({raw.Length:N0} bytes)";
        return reader.TokenType == JsonTokenType.String ? MessageText.Quote(cut) : cut;
    }
}
