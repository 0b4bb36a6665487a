using System.Globalization;
using System.Text;

namespace Indexing.Indexer;

// Values quoted for error messages and index status: they come from definitions and documents,
// so control, format and unpaired surrogate characters are escaped as \uXXXX (a value must not
// break or reorder a log line) and long values are cut.
internal static class MessageText
{
    private const int MaxShownChars = 64;

    public static string Quote(string value)
    {
        var shown = Math.Min(value.Length, MaxShownChars);
        if (shown < value.Length && char.IsHighSurrogate(value[shown - 1]))
        {
            shown--;
        }

        var text = new StringBuilder(shown + 24).Append('\'');
        for (var i = 0; i < shown; i++)
        {
            var c = value[i];
            if (char.IsHighSurrogate(c) && i + 1 < value.Length && char.IsLowSurrogate(value[i + 1]))
            {
                text.Append(c).Append(value[++i]);
            }
            else if (c is '\\' or '\'')
            {
                text.Append('\\').Append(c);
            }
            else if (char.IsControl(c) || char.IsSurrogate(c)
                || CharUnicodeInfo.GetUnicodeCategory(c) is UnicodeCategory.Format
                    or UnicodeCategory.LineSeparator or UnicodeCategory.ParagraphSeparator)
            {
                text.Append(CultureInfo.InvariantCulture, $"\\u{(int)c:X4}");
            }
            else
            {
                text.Append(c);
            }
        }

        text.Append('\'');
        if (shown < value.Length)
        {
            text.Insert(text.Length - 1, "...").Append(CultureInfo.InvariantCulture, $" ({value.Length:N0} chars)");
        }

        return text.ToString();
    }
}
