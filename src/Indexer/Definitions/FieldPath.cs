using System.Collections.Immutable;
using System.Globalization;

using Indexing.Storage;

namespace Indexing.Indexer;

/// <summary>One step of a field path: a property name, and whether it is marked as an array with "[]".</summary>
internal readonly record struct PathSegment(string Name, bool MarkedArray);

// A field's path, parsed. Grammar:
//
//     path    = segment ('.' segment)*
//     segment = name ('[]')?
//     name    = one or more characters other than '.', '[', ']' and control characters,
//               not starting or ending with whitespace, and valid Unicode
//
// '.', '[' and ']' cannot be escaped, so a document property whose name contains one of them
// cannot be indexed (rare in practice; an escape syntax can be added without changing any
// path that parses today). Whitespace at either end of a name is refused because it is almost
// always a typo ("customer. name"); spaces inside a name are fine. "[0]" is refused: a field
// takes every element of an array, never a chosen one.
//
// "[]" documents that an array is expected there. Extraction iterates an array wherever one
// is met, marked or not (see FieldExtractor), so "lines[].product" and "lines.product" take the
// same values; the mark is kept as written, in ToJson and in the definition hash.
internal sealed class FieldPath
{
    // A path longer than the deepest document the store accepts could never match anything.
    public const int MaxSegments = DocumentBodies.MaxDepth;

    private const string Grammar =
        "A path is property names joined by '.', each optionally followed by '[]' to take every element of an array, " +
        "e.g. 'customer.name' or 'lines[].product'";

    private FieldPath(string text, ImmutableArray<PathSegment> segments)
    {
        Text = text;
        Segments = segments;
    }

    public string Text { get; }

    public ImmutableArray<PathSegment> Segments { get; }

    public override string ToString() => Text;

    /// <summary>Parses <paramref name="text"/>; on failure <paramref name="error"/> names the problem and its 1-based character position.</summary>
    public static bool TryParse(string text, out FieldPath? path, out string? error)
    {
        ArgumentNullException.ThrowIfNull(text);
        path = null;
        if (text.Length == 0)
        {
            error = $"path is empty. {Grammar}.";
            return false;
        }

        var segments = ImmutableArray.CreateBuilder<PathSegment>();
        var i = 0;
        while (true)
        {
            var start = i;
            while (i < text.Length && text[i] is not ('.' or '[' or ']'))
            {
                if (char.IsControl(text[i]))
                {
                    error = At(text, i, $"has control character U+{(int)text[i]:X4}", "property names cannot contain control characters");
                    return false;
                }

                if (char.IsSurrogate(text[i]))
                {
                    if (!char.IsHighSurrogate(text[i]) || i + 1 == text.Length || !char.IsLowSurrogate(text[i + 1]))
                    {
                        error = At(text, i, $"has an unpaired surrogate U+{(int)text[i]:X4}", "no document property name can contain one");
                        return false;
                    }

                    i++;
                }

                i++;
            }

            if (i == start)
            {
                error = EmptyName(text, i);
                return false;
            }

            if (char.IsWhiteSpace(text[start]) || char.IsWhiteSpace(text[i - 1]))
            {
                var where = char.IsWhiteSpace(text[start]) ? start : i - 1;
                error = At(text, where,
                    $"has property name {MessageText.Quote(text[start..i])} starting or ending with whitespace",
                    "remove it (spaces inside a name are allowed)");
                return false;
            }

            var name = text[start..i];
            var markedArray = false;
            if (i < text.Length && text[i] == '[')
            {
                if (i + 1 == text.Length)
                {
                    error = At(text, i, "has '[' that is not closed", "write '[]'");
                    return false;
                }

                if (text[i + 1] != ']')
                {
                    error = At(text, i + 1, "has something between '[' and ']'",
                        "array indexes such as '[0]' are not supported; '[]' takes every element");
                    return false;
                }

                markedArray = true;
                i += 2;
            }

            segments.Add(new PathSegment(name, markedArray));
            if (segments.Count > MaxSegments)
            {
                error = At(text, start, $"has more than {MaxSegments} segments",
                    $"no stored document is that deep (depth at most {DocumentBodies.MaxDepth})");
                return false;
            }

            if (i == text.Length)
            {
                break;
            }

            if (text[i] != '.')
            {
                error = text[i] == ']'
                    ? At(text, i, "has ']' without a '[' before it", "remove it")
                    : At(text, i, $"has {MessageText.Quote(text[i].ToString())} right after '[]'", "expected '.' or the end of the path");
                return false;
            }

            i++;
        }

        path = new FieldPath(text, segments.DrainToImmutable());
        error = null;
        return true;
    }

    // i is where a name should have started.
    private static string EmptyName(string text, int i)
    {
        if (i == text.Length)
        {
            return At(text, i - 1, "ends with '.'", "remove it or add the property name after it");
        }

        return text[i] switch
        {
            '.' when i == 0 => At(text, i, "starts with '.'", "paths start at the document root, so begin with a property name"),
            '.' => At(text, i, "has an empty property name ('..')", "remove the extra '.'"),
            '[' => At(text, i, "has '[]' with no property name before it", "write the array's property name first, e.g. 'tags[]'"),
            _ => At(text, i, "has ']' without a '[' before it", "remove it"),
        };
    }

    private static string At(string text, int index, string problem, string fix) =>
        string.Create(CultureInfo.InvariantCulture,
            $"path {MessageText.Quote(text)} {problem} at character {index + 1}; {fix}. {Grammar}.");
}
