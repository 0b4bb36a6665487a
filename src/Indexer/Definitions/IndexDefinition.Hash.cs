using System.Security.Cryptography;
using System.Text;

namespace Indexing.Indexer;

// DefinitionHash is stored with every commit of the index; on open, a different hash means the
// index was built from another definition and must be rebuilt. So the hash must change with
// anything that changes what the index holds, and with nothing else.
//
// What is in it: the collection, and per field its name, path (as written, "[]" included),
// type, stored and sortable, with defaults written out, fields sorted by name (field order does
// not change the index), and the format version below.
//
// What is not: the index name. The name is the index's identity and its directory; the hash
// describes its content. An index is never renamed in place (another name is another index in
// another directory), so leaving the name out cannot hide a change from the stale check, and
// it lets two definitions that differ only by name be seen to build identical indexes (e.g.
// a replacement that turns out to be a no-op). Nor are whitespace, property order or field
// order, which change nothing.
//
// The form is plain text with every string length-prefixed in UTF-8 bytes, so no value can
// imitate a separator, and it depends on no JSON encoder's escaping rules, which could change
// between framework versions and silently force every index to rebuild.
public sealed partial class IndexDefinition
{
    /// <summary>
    /// Version of the canonical form and of the extraction rules it stands for. Raise it when
    /// either changes (e.g. a type starts accepting other JSON values): every index then
    /// reports a different hash and is rebuilt.
    /// </summary>
    internal const int CanonicalFormVersion = 1;

    /// <summary>The text <see cref="DefinitionHash"/> is computed from.</summary>
    internal string CanonicalForm()
    {
        var text = new StringBuilder()
            .Append("index-definition ").Append(CanonicalFormVersion).Append('\n');
        AppendString(text, "collection", Collection);

        var sorted = Fields.Sort(static (x, y) => string.CompareOrdinal(x.Name, y.Name));
        foreach (var field in sorted)
        {
            AppendString(text, "field", field.Name);
            AppendString(text, "path", field.Path);
            text.Append("type ").Append(IndexFieldTypes.Name(field.Type)).Append('\n')
                .Append("stored ").Append(field.Stored ? "true" : "false").Append('\n')
                .Append("sortable ").Append(field.Sortable ? "true" : "false").Append('\n');
        }

        return text.ToString();
    }

    private string ComputeHash() => Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(CanonicalForm())));

    // Every string is valid Unicode by now (the rules refuse unpaired surrogates), so its UTF-8
    // length is exact.
    private static void AppendString(StringBuilder text, string key, string value) =>
        text.Append(key).Append(' ').Append(Encoding.UTF8.GetByteCount(value)).Append(':').Append(value).Append('\n');
}
