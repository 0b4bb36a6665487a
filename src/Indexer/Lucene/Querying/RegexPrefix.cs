using System.Text;

namespace Indexing.Indexer;

// The literal beginning every match of a .NET regular expression must start with, read off the
// pattern text: the characters before the first construct (class, group, anchor, '.'), less the last
// one when a quantifier that allows zero follows it (`ab?c` begins with "a"). Empty when the pattern
// has an alternation outside any group (`abc|x` has no common beginning) or starts with a construct.
// Conservative by design: it may find a shorter beginning than the true one, never a wrong one,
// since a wrong one would make the enumeration skip matching terms.
internal static class RegexPrefix
{
    private const string Metacharacters = ".$^{[(|)*+?\\";

    public static string Of(string pattern)
    {
        if (HasTopLevelAlternation(pattern))
        {
            return string.Empty;
        }

        var prefix = new StringBuilder();
        for (var i = 0; i < pattern.Length; i++)
        {
            var c = pattern[i];
            var next = i + 1;
            if (c == '\\')
            {
                // An escaped punctuation character is itself; \d, \w, \b, \1 and the like are constructs.
                if (next >= pattern.Length || char.IsLetterOrDigit(pattern[next]) || char.IsWhiteSpace(pattern[next]))
                {
                    break;
                }

                c = pattern[next];
                next++;
            }
            else if (Metacharacters.Contains(c, StringComparison.Ordinal) || c is '}' or ']')
            {
                break;
            }

            if (next < pattern.Length && pattern[next] is '?' or '*' or '{')
            {
                // May occur zero times ({0,n} included: '{' is treated as allowing zero).
                break;
            }

            prefix.Append(c);
            if (next < pattern.Length && pattern[next] == '+')
            {
                break;
            }

            i = next - 1;
        }

        return prefix.ToString();
    }

    // A '|' outside every group and character class.
    private static bool HasTopLevelAlternation(string pattern)
    {
        var depth = 0;
        var inClass = false;
        for (var i = 0; i < pattern.Length; i++)
        {
            switch (pattern[i])
            {
                case '\\':
                    i++;
                    break;
                case '[' when !inClass:
                    inClass = true;
                    if (i + 1 < pattern.Length && pattern[i + 1] == ']')
                    {
                        i++; // a ']' first in a class is a literal
                    }

                    break;
                case ']' when inClass:
                    inClass = false;
                    break;
                case '(' when !inClass:
                    depth++;
                    break;
                case ')' when !inClass:
                    depth--;
                    break;
                case '|' when !inClass && depth == 0:
                    return true;
            }
        }

        return false;
    }
}
