using System.Text;
using System.Text.RegularExpressions;

using Indexing.Storage;

using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Util;

namespace Indexing.Indexer;

// A wildcard (`ship*d`, `?ed`) or regular-expression (`/ship(ped|ping)/`) term, as a Lucene
// MultiTermQuery whose matching is done by .NET's non-backtracking regex engine.
//
// Why not Lucene's WildcardQuery and RegexpQuery: Lucene.Net 4.8 turns the pattern into a
// deterministic automaton with no limit on its size, and that subset construction is exponential in
// patterns as short as `x*a????????????????` or `/x[ab]*a[ab]{18}/`, each more `?` doubling the
// time, uninterruptible, while the memory grows (benchmarks/results/README.md, "Other figures"). The NonBacktracking
// engine refuses a pattern whose automaton could exceed 10,000 nodes (NotSupportedException, at
// construction) and matches in time linear in the term.
//
// Enumeration: only the terms that start with the pattern's literal beginning are read (a seek to
// it, then in order until the first term past it), which is why a pattern must have one (the parser
// refuses a leading wildcard; RegexPrefix refuses a regex without one). The query's budget is checked
// every 256 terms read, so a pattern whose literal beginning is short still stops at the time limit.
internal sealed class PatternTermQuery : MultiTermQuery
{
    // Lucene patterns match whole terms; \z, unlike $, does not also match before a final newline.
    private const string WholeTermStart = @"\A(?:";
    private const string WholeTermEnd = @")\z";

    private readonly string _text;
    private readonly string _kind;
    private readonly BytesRef _prefix;
    private readonly Regex _pattern;
    private readonly QueryBudget _budget;

    private PatternTermQuery(string field, string kind, string text, string prefix, Regex pattern, QueryBudget budget)
        : base(field)
    {
        _kind = kind;
        _text = text;
        _prefix = new BytesRef(prefix);
        _pattern = pattern;
        _budget = budget;
    }

    /// <summary>How the term reads in a message, e.g. <c>wildcard 'customer:ac*e'</c>.</summary>
    public string Description => $"{_kind} {MessageText.Quote(Field + ":" + _text)}";

    /// <summary>
    /// A classic-syntax wildcard term (<c>*</c> any characters, <c>?</c> one, <c>\</c> escapes), matched
    /// against whole terms. <paramref name="text"/> must not start with a wildcard (the parser refuses that).
    /// </summary>
    public static PatternTermQuery Wildcard(string field, string text, QueryBudget budget)
    {
        var regex = new StringBuilder(text.Length + 16).Append(WholeTermStart);
        var prefix = new StringBuilder();
        var literal = true;
        for (var i = 0; i < text.Length; i++)
        {
            var c = text[i];
            if (c == '\\' && i + 1 < text.Length)
            {
                c = text[++i];
            }
            else if (c is '*' or '?')
            {
                regex.Append(c == '*' ? ".*" : ".");
                literal = false;
                continue;
            }

            regex.Append(Regex.Escape(c.ToString()));
            if (literal)
            {
                prefix.Append(c);
            }
        }

        return new PatternTermQuery(field, "wildcard", text, prefix.ToString(), Compile(regex.Append(WholeTermEnd).ToString(), ignoreCase: false), budget);
    }

    /// <summary>
    /// A regular expression in .NET syntax, matched against whole terms by the non-backtracking engine.
    /// Throws <see cref="ArgumentException"/> (the message says what is wrong) for a pattern that is not
    /// valid, that needs backtracking (backreferences, lookarounds, atomic groups), whose automaton
    /// would be too large, or that does not begin with a literal character.
    /// </summary>
    public static PatternTermQuery RegularExpression(string field, string pattern, bool ignoreCase, QueryBudget budget)
    {
        var prefix = RegexPrefix.Of(pattern);
        if (prefix.Length == 0)
        {
            throw new ArgumentException(
                "it does not begin with a literal character; like a wildcard, a regular expression must, so that only the terms " +
                "starting with it are read (/ship.*d/ reads the terms starting with 'ship'; /.*d/ would read every term of the field).");
        }

        Regex regex;
        try
        {
            regex = Compile(WholeTermStart + pattern + WholeTermEnd, ignoreCase);
        }
        catch (RegexParseException e)
        {
            var at = Math.Clamp(e.Offset - WholeTermStart.Length, 0, pattern.Length) + 1;
            throw new ArgumentException($"it is not a valid regular expression at character {at}: {e.Error}.", e);
        }
        catch (NotSupportedException e)
        {
            // Backtracking constructs, or an automaton that could grow past the engine's 10,000 nodes.
            throw new ArgumentException($"{e.Message.TrimEnd('.')}. Simplify it (fewer or smaller counted repetitions such as {{n}}).", e);
        }

        return new PatternTermQuery(field, "regular expression", "/" + pattern + "/", ignoreCase ? prefix.ToLowerInvariant() : prefix, regex, budget);
    }

    private static Regex Compile(string pattern, bool ignoreCase) =>
        new(pattern, RegexOptions.NonBacktracking | RegexOptions.CultureInvariant | RegexOptions.Singleline | (ignoreCase ? RegexOptions.IgnoreCase : RegexOptions.None));

    protected override TermsEnum GetTermsEnum(Terms terms, Lucene.Net.Util.AttributeSource atts) =>
        new PatternTermsEnum(terms.GetEnumerator(), this);

    public override string ToString(string field) =>
        (Field == field ? string.Empty : Field + ":") + _text + ToStringUtils.Boost(Boost);

    public override bool Equals(object? obj) =>
        obj is PatternTermQuery other && base.Equals(other) && _text == other._text && _kind == other._kind && _pattern.Options == other._pattern.Options;

    public override int GetHashCode() => HashCode.Combine(base.GetHashCode(), _text, _kind);

    private sealed class PatternTermsEnum : FilteredTermsEnum
    {
        private readonly PatternTermQuery _query;
        private char[] _chars = new char[64];

        public PatternTermsEnum(TermsEnum terms, PatternTermQuery query)
            : base(terms)
        {
            _query = query;
            SetInitialSeekTerm(query._prefix);
        }

        protected override AcceptStatus Accept(BytesRef term)
        {
            _query._budget.CheckSometimes();
            if (!StringHelper.StartsWith(term, _query._prefix))
            {
                return AcceptStatus.END;
            }

            var span = term.Bytes.AsSpan(term.Offset, term.Length);
            var needed = Encoding.UTF8.GetMaxCharCount(span.Length);
            if (_chars.Length < needed)
            {
                _chars = new char[Math.Max(needed, _chars.Length * 2)];
            }

            var length = Encoding.UTF8.GetChars(span, _chars);
            return _query._pattern.IsMatch(_chars.AsSpan(0, length)) ? AcceptStatus.YES : AcceptStatus.NO;
        }
    }
}
