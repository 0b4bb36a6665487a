using System.Buffers;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Unicode;

using Indexing.Storage;

namespace Indexing.Indexer;

// The JSON form:
//   { "name": "orders-by-customer", "collection": "orders",
//     "fields": [ { "name": "customer", "path": "customer.name", "type": "text", "stored": false, "sortable": false } ] }
// name, collection, fields and each field's name, path and type are required; stored and
// sortable default to false. Unknown and repeated properties are refused, so a typo such as
// "sortible" fails loudly instead of silently meaning "false". Strict JSON: no comments, no
// trailing commas.
public sealed partial class IndexDefinition
{
    private static readonly string[] _definitionProperties = ["name", "collection", "fields"];
    private static readonly string[] _fieldProperties = ["name", "path", "type", "stored", "sortable"];
    private const int RequiredFieldProperties = 3;

    private static readonly JsonReaderOptions _readerOptions = new()
    {
        CommentHandling = JsonCommentHandling.Disallow,
        AllowTrailingCommas = false,
    };

    // Written for people to read: indented, and non-ASCII text kept as it is (the relaxed
    // encoder is "unsafe" only for embedding in HTML, which this text is not).
    private static readonly JsonWriterOptions _writerOptions = new()
    {
        Indented = true,
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
    };

    private static readonly UTF8Encoding _strictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    /// <summary>Reads a definition from its JSON form.</summary>
    /// <exception cref="IndexDefinitionException">The JSON is malformed or a rule is broken; every problem is listed.</exception>
    public static IndexDefinition Parse(ReadOnlySpan<byte> utf8Json)
    {
        if (!Utf8.IsValid(utf8Json))
        {
            throw Single("", "the definition is not valid UTF-8; save it as UTF-8 text.");
        }

        var problems = new List<IndexDefinitionProblem>();
        string? name = null;
        string? collection = null;
        List<FieldDraft?>? fields = null;
        var reader = new Utf8JsonReader(utf8Json, _readerOptions);
        try
        {
            ReadDefinition(ref reader, problems, ref name, ref collection, ref fields);
            // On a final block this throws for anything but whitespace after the root value.
            reader.Read();
        }
        catch (JsonException exception)
        {
            // The other problems are left out: what was read before a syntax error may be cut short.
            var line = (exception.LineNumber ?? 0) + 1;
            var column = (exception.BytePositionInLine ?? 0) + 1;
            throw Single("",
                $"the definition is not well-formed JSON at line {line}, byte {column}: {SyntaxReason(exception)}. " +
                "Definitions are strict JSON (no comments or trailing commas); fix the text at that position.");
        }

        catch (InvalidOperationException)
        {
            // Strict JSON allows an escaped unpaired surrogate ("\ud800"), but it is not Unicode
            // text, so the reader refuses to decode the string.
            throw Single("",
                $"the definition has a string at byte {reader.TokenStartIndex + 1} that escapes an unpaired surrogate (such as \\ud800 " +
                "without its low half), which is not Unicode text; fix the escape.");
        }

        return Build(name, collection, fields, problems);
    }

    /// <summary>Reads a definition from its JSON form.</summary>
    /// <exception cref="IndexDefinitionException">The JSON is malformed or a rule is broken; every problem is listed.</exception>
    public static IndexDefinition Parse(string json)
    {
        ArgumentNullException.ThrowIfNull(json);
        byte[] utf8;
        try
        {
            utf8 = _strictUtf8.GetBytes(json);
        }
        catch (EncoderFallbackException exception)
        {
            throw Single("", $"the definition text has an unpaired surrogate at char index {exception.Index}, which has no UTF-8 form; fix the text.");
        }

        return Parse(utf8);
    }

    /// <summary>The JSON form, indented, with every property written (defaults too); <see cref="Parse(string)"/> reads it back unchanged.</summary>
    public string ToJson()
    {
        var buffer = new ArrayBufferWriter<byte>();
        using (var writer = new Utf8JsonWriter(buffer, _writerOptions))
        {
            writer.WriteStartObject();
            writer.WriteString("name", Name);
            writer.WriteString("collection", Collection);
            writer.WriteStartArray("fields");
            foreach (var field in Fields)
            {
                writer.WriteStartObject();
                writer.WriteString("name", field.Name);
                writer.WriteString("path", field.Path);
                writer.WriteString("type", IndexFieldTypes.Name(field.Type));
                writer.WriteBoolean("stored", field.Stored);
                writer.WriteBoolean("sortable", field.Sortable);
                writer.WriteEndObject();
            }

            writer.WriteEndArray();
            writer.WriteEndObject();
        }

        return Encoding.UTF8.GetString(buffer.WrittenSpan);
    }

    private static void ReadDefinition(
        ref Utf8JsonReader reader,
        List<IndexDefinitionProblem> problems,
        ref string? name,
        ref string? collection,
        ref List<FieldDraft?>? fields)
    {
        reader.Read();
        if (reader.TokenType != JsonTokenType.StartObject)
        {
            problems.Add(new("", $"an index definition is a JSON object {{ \"name\": ..., \"collection\": ..., \"fields\": [...] }}, but this is {Describe(ref reader)}."));
            reader.Skip();
            return;
        }

        var seen = 0;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            switch (NextProperty(ref reader, _definitionProperties, "", ref seen, problems))
            {
                case 0:
                    name = ReadString(ref reader, "name", problems);
                    break;
                case 1:
                    collection = ReadString(ref reader, "collection", problems);
                    break;
                case 2:
                    fields = ReadFields(ref reader, problems);
                    break;
            }
        }

        ReportMissing(seen, _definitionProperties, _definitionProperties.Length, "", problems);
    }

    private static List<FieldDraft?>? ReadFields(ref Utf8JsonReader reader, List<IndexDefinitionProblem> problems)
    {
        if (reader.TokenType != JsonTokenType.StartArray)
        {
            problems.Add(new("fields", $"must be an array of field objects, but is {Describe(ref reader)}."));
            reader.Skip();
            return null;
        }

        var fields = new List<FieldDraft?>();
        while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
        {
            var at = $"fields[{fields.Count}]";
            if (reader.TokenType != JsonTokenType.StartObject)
            {
                problems.Add(new(at, $"must be a field object {{ \"name\": ..., \"path\": ..., \"type\": ... }}, but is {Describe(ref reader)}."));
                reader.Skip();
                fields.Add(null);
                continue;
            }

            fields.Add(ReadField(ref reader, at + ".", problems));
        }

        return fields;
    }

    private static FieldDraft ReadField(ref Utf8JsonReader reader, string at, List<IndexDefinitionProblem> problems)
    {
        var field = new FieldDraft();
        var seen = 0;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            switch (NextProperty(ref reader, _fieldProperties, at, ref seen, problems))
            {
                case 0:
                    field.Name = ReadString(ref reader, at + "name", problems);
                    break;
                case 1:
                    field.Path = ReadString(ref reader, at + "path", problems);
                    break;
                case 2:
                    field.Type = ReadType(ref reader, at + "type", problems);
                    break;
                case 3:
                    field.Stored = ReadBool(ref reader, at + "stored", problems);
                    break;
                case 4:
                    field.Sortable = ReadBool(ref reader, at + "sortable", problems);
                    break;
            }
        }

        // The first three (name, path, type) are required.
        ReportMissing(seen, _fieldProperties, RequiredFieldProperties, at, problems);
        return field;
    }

    // Moves from a property name to its value and says which known property it is; for an
    // unknown or repeated one, reports it, skips the value and returns -1.
    private static int NextProperty(
        ref Utf8JsonReader reader, string[] known, string at, ref int seen, List<IndexDefinitionProblem> problems)
    {
        var index = -1;
        for (var k = 0; k < known.Length && index < 0; k++)
        {
            if (reader.ValueTextEquals(known[k]))
            {
                index = k;
            }
        }

        var property = reader.GetString()!;
        reader.Read();
        if (index < 0 || (seen & (1 << index)) != 0)
        {
            problems.Add(new(at + property, index < 0
                ? $"unknown property {MessageText.Quote(property)}{Suggestion(property, known)}; the properties here are {string.Join(", ", known)}. Fix the spelling or remove it."
                : $"property {MessageText.Quote(property)} appears more than once; keep one."));
            reader.Skip();
            return -1;
        }

        seen |= 1 << index;
        return index;
    }

    private static void ReportMissing(int seen, string[] known, int required, string at, List<IndexDefinitionProblem> problems)
    {
        for (var k = 0; k < required; k++)
        {
            if ((seen & (1 << k)) == 0)
            {
                problems.Add(new(at + known[k], $"required property {MessageText.Quote(known[k])} is missing; add it."));
            }
        }
    }

    private static string? ReadString(ref Utf8JsonReader reader, string at, List<IndexDefinitionProblem> problems)
    {
        if (reader.TokenType == JsonTokenType.String)
        {
            return reader.GetString();
        }

        problems.Add(new(at, $"must be a JSON string, but is {Describe(ref reader)}."));
        reader.Skip();
        return null;
    }

    private static IndexFieldType? ReadType(ref Utf8JsonReader reader, string at, List<IndexDefinitionProblem> problems)
    {
        var name = ReadString(ref reader, at, problems);
        if (name is null)
        {
            return null;
        }

        if (IndexFieldTypes.TryParse(name, out var type))
        {
            return type;
        }

        problems.Add(new(at, $"unknown field type {MessageText.Quote(name)}; the types are {IndexFieldTypes.AllowedNames} (lowercase)."));
        return null;
    }

    private static bool ReadBool(ref Utf8JsonReader reader, string at, List<IndexDefinitionProblem> problems)
    {
        if (reader.TokenType is JsonTokenType.True or JsonTokenType.False)
        {
            return reader.TokenType == JsonTokenType.True;
        }

        problems.Add(new(at, $"must be true or false (without quotes), but is {Describe(ref reader)}."));
        reader.Skip();
        return false;
    }

    // What a value is, for "must be X, but is Y" messages; scalars show their value.
    private static string Describe(ref Utf8JsonReader reader) => reader.TokenType switch
    {
        JsonTokenType.StartObject => "an object",
        JsonTokenType.StartArray => "an array",
        JsonTokenType.String => $"the string {MessageText.Quote(reader.GetString()!)}",
        JsonTokenType.Number => $"the number {Encoding.UTF8.GetString(reader.ValueSpan)}",
        JsonTokenType.True => "true",
        JsonTokenType.False => "false",
        JsonTokenType.Null => "null",
        _ => "nothing",
    };

    // " (did you mean 'sortable'?)" when a known name is within two edits of the unknown one.
    private static string Suggestion(string property, string[] known)
    {
        string? best = null;
        var bestDistance = 3;
        foreach (var candidate in known)
        {
            var distance = EditDistance(property.ToLowerInvariant(), candidate);
            if (distance < bestDistance)
            {
                best = candidate;
                bestDistance = distance;
            }
        }

        return best is null ? "" : $" (did you mean '{best}'?)";
    }

    private static int EditDistance(string a, string b)
    {
        var previous = new int[b.Length + 1];
        var current = new int[b.Length + 1];
        for (var j = 0; j <= b.Length; j++)
        {
            previous[j] = j;
        }

        for (var i = 1; i <= a.Length; i++)
        {
            current[0] = i;
            for (var j = 1; j <= b.Length; j++)
            {
                var substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
                current[j] = Math.Min(substitution, Math.Min(previous[j], current[j - 1]) + 1);
            }

            (previous, current) = (current, previous);
        }

        return previous[b.Length];
    }

    // The reader's message ends with its own zero-based " LineNumber: ..." suffix (the caller
    // gives one-based figures) and may advise changing reader options, which is not for the
    // author of a definition.
    private static string SyntaxReason(JsonException exception)
    {
        var message = exception.Message;
        var suffix = message.IndexOf(" LineNumber:", StringComparison.Ordinal);
        var reason = suffix < 0 ? message : message[..suffix];
        var advice = reason.IndexOf(" Change the reader options", StringComparison.Ordinal);
        return (advice < 0 ? reason : reason[..advice]).TrimEnd('.', ' ');
    }

    private static IndexDefinitionException Single(string location, string message) =>
        new(null, [new IndexDefinitionProblem(location, message)]);
}
