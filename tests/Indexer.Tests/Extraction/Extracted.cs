using System.Globalization;
using System.Text;

namespace Indexing.Indexer.Tests;

// Runs extraction for tests and reads the results back as text, so assertions compare plain
// lists: strings as they are, numbers in invariant round-trip form, bools as true/false.
internal static class Extracted
{
    public static IndexDefinition Definition(params IndexFieldDefinition[] fields) =>
        IndexDefinition.Create("test-index", "orders", fields);

    public static ExtractedFields From(string json, params IndexFieldDefinition[] fields)
    {
        var extractor = new FieldExtractor(Definition(fields));
        var buffer = extractor.CreateBuffer();
        extractor.Extract(Encoding.UTF8.GetBytes(json), buffer);
        return buffer;
    }

    /// <summary>The values of the named field, as text.</summary>
    public static string[] Values(this ExtractedFields fields, string name)
    {
        var field = fields.Definition.Fields.IndexOf(fields.Definition.Fields.Single(f => f.Name == name));
        return fields.Definition.Fields[field].Type switch
        {
            IndexFieldType.Text or IndexFieldType.Keyword => fields.Strings(field).ToArray(),
            IndexFieldType.Long => [.. fields.Longs(field).ToArray().Select(v => v.ToString(CultureInfo.InvariantCulture))],
            IndexFieldType.Double => [.. fields.Doubles(field).ToArray().Select(v => v.ToString("R", CultureInfo.InvariantCulture))],
            _ => [.. fields.Bools(field).ToArray().Select(v => v ? "true" : "false")],
        };
    }

    /// <summary>Every value and mismatch, one line each, to compare whole results.</summary>
    public static string Describe(this ExtractedFields fields)
    {
        var text = new StringBuilder();
        foreach (var field in fields.Definition.Fields)
        {
            text.Append(field.Name).Append(": ").AppendJoin(" | ", fields.Values(field.Name)).Append('\n');
        }

        text.Append("mismatches: ").Append(fields.MismatchCount).Append('\n');
        foreach (var mismatch in fields.Mismatches)
        {
            text.Append(mismatch).Append('\n');
        }

        return text.ToString();
    }

    public static IndexFieldDefinition Text(string name, string path) => new(name, path, IndexFieldType.Text);

    public static IndexFieldDefinition Keyword(string name, string path) => new(name, path, IndexFieldType.Keyword);

    public static IndexFieldDefinition Long(string name, string path) => new(name, path, IndexFieldType.Long);

    public static IndexFieldDefinition Double(string name, string path) => new(name, path, IndexFieldType.Double);

    public static IndexFieldDefinition Bool(string name, string path) => new(name, path, IndexFieldType.Bool);
}
