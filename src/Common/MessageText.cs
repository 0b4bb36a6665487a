using System.Globalization;
using System.Text;

namespace Indexing;

/// <summary>Quotes values (ids, names, paths) for error messages and status text.</summary>
/// <remarks>
/// The values come from clients and documents, so control, format and unpaired surrogate
/// characters are escaped as \uXXXX (a value must not break or reorder a log line), quotes and
/// backslashes are escaped, and values over 64 chars are cut to a prefix with their UTF-8 length
/// given (every too-long document id is cut, so that rule's message gets its length from here).
/// Every layer quotes through this one type so messages look alike.
/// </remarks>
internal static class MessageText
{
    private const int DisplayChars = 64;

    /// <summary>The value in single quotes, escaped and possibly cut; "(null)" for null.</summary>
    public static string Quote(string? value)
    {
        if (value is null)
        {
            return "(null)";
        }

        var shown = value.Length <= DisplayChars ? value.Length : DisplayChars;
        if (shown < value.Length && char.IsHighSurrogate(value[shown - 1]))
        {
            shown--;
        }

        var text = new StringBuilder(shown + 16).Append('\'');
        AppendEscaped(text, value, shown);
        text.Append('\'');
        if (shown < value.Length)
        {
            // Encoding.UTF8 counts an unpaired surrogate as its 3-byte replacement, which is close enough here.
            text.Insert(text.Length - 1, "...")
                .Append(CultureInfo.InvariantCulture, $" (truncated; {Encoding.UTF8.GetByteCount(value):N0} UTF-8 bytes)");
        }

        return text.ToString();
    }

    // The first `shown` chars of value, escaped (a surrogate pair is kept whole).
    private static void AppendEscaped(StringBuilder text, string value, int shown)
    {
        for (var i = 0; i < shown; i++)
        {
            var c = value[i];
            var paired = char.IsHighSurrogate(c) && i + 1 < value.Length && char.IsLowSurrogate(value[i + 1]);
            if (paired)
            {
                text.Append(c).Append(value[++i]);
            }
            else if (c is '\\' or '\'')
            {
                text.Append('\\').Append(c);
            }
            else if (char.IsControl(c) || char.IsSurrogate(c) || IsInvisibleLayout(c))
            {
                text.Append(CultureInfo.InvariantCulture, $"\\u{(int)c:X4}");
            }
            else
            {
                text.Append(c);
            }
        }
    }

    /// <summary>
    /// A file or directory path in single quotes, escaped like <see cref="Quote"/> but never cut:
    /// paths come from the operator's configuration, and a message naming a file must name all of it.
    /// </summary>
    public static string QuotePath(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        var text = new StringBuilder(path.Length + 2).Append('\'');
        AppendEscaped(text, path, path.Length);
        return text.Append('\'').ToString();
    }

    private static bool IsInvisibleLayout(char c) =>
        CharUnicodeInfo.GetUnicodeCategory(c) is UnicodeCategory.Format
            or UnicodeCategory.LineSeparator or UnicodeCategory.ParagraphSeparator;
}
