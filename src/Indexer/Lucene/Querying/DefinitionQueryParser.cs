using System.Globalization;
using System.Text.RegularExpressions;

using Indexing.Storage;

using Lucene.Net.Analysis;
using Lucene.Net.Index;
using Lucene.Net.QueryParsers.Classic;
using Lucene.Net.Search;
using Lucene.Net.Util;

namespace Indexing.Indexer;

// Lucene's classic query parser, typed by the index definition. The classic parser knows nothing
// of field types: it would analyse "total:100" as text and compare "[5 TO 50]" as strings, which
// finds nothing in numeric (trie-encoded) fields. Here each field query is built for the field's
// type: numeric terms and ranges become NumericRangeQuery, keyword and bool values exact
// TermQuery, text goes through the analyser; an unknown field or a value of the wrong type is an
// InvalidQueryException naming both.
//
// Terms that expand (prefix, wildcard, regular expression, fuzzy) are bounded by the query's
// budget: wildcards and regular expressions are matched by PatternTermQuery (not Lucene's automata,
// whose construction is exponential in some short patterns), prefixes and patterns expand through
// BoundedTermsRewrite (at most MaxExpandedTerms terms), fuzzy terms keep their closest
// min(50, MaxExpandedTerms) terms, and no pattern may start with a wildcard. Ranges are not capped:
// their cost is linear in the terms they cover, like a long OR, and the time limit bounds it.
//
// Parse errors become QuerySyntaxException with the position (Parse below).
//
// Not thread-safe (the base keeps parse state): one instance per query; construction is cheap.
internal sealed class DefinitionQueryParser : QueryParser
{
    private readonly IndexDefinition _definition;
    private readonly IReadOnlyDictionary<string, IndexFieldType> _types;
    private readonly QueryBudget _budget;
    private readonly BoundedTermsRewrite _rewrite;

    private DefinitionQueryParser(IndexDefinition definition, IReadOnlyDictionary<string, IndexFieldType> types, string defaultField, Analyzer analyzer, QueryBudget budget)
        : base(LuceneVersion.LUCENE_48, defaultField, analyzer)
    {
        _definition = definition;
        _types = types; // the index's immutable map, shared by every query
        _budget = budget;
        _rewrite = new BoundedTermsRewrite(budget);
        // Keyword values are exact and text is lowercased by the analyser, so lowercasing
        // wildcard/prefix terms is decided per field below, not globally.
        LowercaseExpandedTerms = false;
        AllowLeadingWildcard = false;
    }

    /// <summary>Parses the query's text for the index of <paramref name="fields"/>, text analysed by <paramref name="analyzer"/>.</summary>
    /// <exception cref="QuerySyntaxException">The text is not valid classic syntax.</exception>
    /// <exception cref="InvalidQueryException">An unknown field, a value of the wrong type, a pattern it refuses.</exception>
    public static Query Parse(IndexDefinition definition, QueryFields fields, IndexQuery query, Analyzer analyzer, QueryBudget budget)
    {
        CheckNesting(definition.Name, query.Text);
        var parser = new DefinitionQueryParser(definition, fields.Types, fields.DefaultField(query), analyzer, budget);
        try
        {
            return parser.Parse(query.Text);
        }
        catch (ParseException exception)
        {
            var (column, problem) = Describe(query.Text, exception);
            throw new QuerySyntaxException(definition.Name, query.Text, column, problem, exception);
        }
    }

    protected override Query GetFieldQuery(string field, string queryText, bool quoted)
    {
        var type = TypeOf(field);
        return type switch
        {
            IndexFieldType.Text => base.GetFieldQuery(field, queryText, quoted),
            IndexFieldType.Keyword => new TermQuery(new Term(field, queryText)),
            IndexFieldType.Bool => new TermQuery(new Term(field, ParseBool(field, queryText))),
            IndexFieldType.Long => LongRange(field, ParseLong(field, queryText), ParseLong(field, queryText), true, true),
            _ => DoubleRange(field, ParseDouble(field, queryText), ParseDouble(field, queryText), true, true),
        };
    }

    protected override Query GetRangeQuery(string field, string part1, string part2, bool startInclusive, bool endInclusive)
    {
        var type = TypeOf(field);
        switch (type)
        {
            case IndexFieldType.Long:
                return LongRange(field, Open(part1) ? null : ParseLong(field, part1), Open(part2) ? null : ParseLong(field, part2), startInclusive, endInclusive);
            case IndexFieldType.Double:
                return DoubleRange(
                    field, Open(part1) ? null : ParseDouble(field, part1), Open(part2) ? null : ParseDouble(field, part2), startInclusive, endInclusive);
            case IndexFieldType.Keyword:
                return TermRangeQuery.NewStringRange(field, Open(part1) ? null : part1, Open(part2) ? null : part2, startInclusive, endInclusive);
            case IndexFieldType.Text:
                return base.GetRangeQuery(field, part1?.ToLowerInvariant(), part2?.ToLowerInvariant(), startInclusive, endInclusive);
            default:
                throw Invalid($"field {MessageText.Quote(field)} is a bool field; ranges apply to long, double, keyword and text fields. Use {field}:true or {field}:false.");
        }
    }

    // A range query must use the step the field was written with (or a multiple of it): __etag has
    // its own, long and double fields LuceneDocumentMapper.NumericPrecisionStep.
    private static NumericRangeQuery<long> LongRange(string field, long? min, long? max, bool minInclusive, bool maxInclusive) =>
        NumericRangeQuery.NewInt64Range(
            field, field == IndexFieldNames.Etag ? LuceneDocumentMapper.EtagPrecisionStep : LuceneDocumentMapper.NumericPrecisionStep, min, max, minInclusive, maxInclusive);

    private static NumericRangeQuery<double> DoubleRange(string field, double? min, double? max, bool minInclusive, bool maxInclusive) =>
        NumericRangeQuery.NewDoubleRange(field, LuceneDocumentMapper.NumericPrecisionStep, min, max, minInclusive, maxInclusive);

    protected override Query GetPrefixQuery(string field, string termStr) =>
        base.GetPrefixQuery(field, ExpandableTerm(field, termStr, "a prefix query"));

    protected override Query GetWildcardQuery(string field, string termStr)
    {
        if (field == "*" && termStr == "*")
        {
            return new MatchAllDocsQuery();
        }

        return base.GetWildcardQuery(field, ExpandableTerm(field, termStr, "a wildcard query"));
    }

    protected override Query GetFuzzyQuery(string field, string termStr, float minSimilarity) =>
        base.GetFuzzyQuery(field, ExpandableTerm(field, termStr, "a fuzzy query"), minSimilarity);

    // Not lowercased like the other patterns (that would turn \D into \d): on text fields the
    // pattern ignores case instead, and its literal beginning is lowercased to seek the lowercase terms.
    protected override Query GetRegexpQuery(string field, string termStr)
    {
        _ = ExpandableTerm(field, termStr, "a regular expression"); // refuses numeric and bool fields
        var ignoreCase = TypeOf(field) == IndexFieldType.Text;
        try
        {
            return Bounded(PatternTermQuery.RegularExpression(field, termStr, ignoreCase, _budget));
        }
        catch (ArgumentException e)
        {
            throw Invalid($"regular expression {MessageText.Quote("/" + termStr + "/")} on field {MessageText.Quote(field)}: {e.Message}");
        }
    }

    protected override Query NewWildcardQuery(Term t) => Bounded(PatternTermQuery.Wildcard(t.Field, t.Text, _budget));

    protected override Query NewPrefixQuery(Term prefix) => Bounded(new PrefixQuery(prefix));

    // The base's query (its edit distance from the ~ similarity), with the expansions capped: Lucene keeps 50 whatever the query allows.
    protected override Query NewFuzzyQuery(Term term, float minimumSimilarity, int prefixLength)
    {
        var fuzzy = (FuzzyQuery)base.NewFuzzyQuery(term, minimumSimilarity, prefixLength);
        return new FuzzyQuery(term, fuzzy.MaxEdits, fuzzy.PrefixLength, Math.Min(IndexQuery.MaxFuzzyExpansions, _budget.MaxExpandedTerms), fuzzy.Transpositions);
    }

    private MultiTermQuery Bounded(MultiTermQuery query)
    {
        query.MultiTermRewriteMethod = _rewrite;
        return query;
    }

    // Multi-term queries work on terms as indexed: text terms are lowercase, keyword terms exact,
    // numeric terms are encoded and cannot be matched by patterns.
    private string ExpandableTerm(string field, string term, string what) =>
        TypeOf(field) switch
        {
            IndexFieldType.Text => term.ToLowerInvariant(),
            IndexFieldType.Keyword => term,
            var type => throw Invalid(
                $"{what} on field {MessageText.Quote(field)} ({IndexFieldTypes.Name(type)}) is not supported; patterns apply to text and keyword fields" +
                (type is IndexFieldType.Long or IndexFieldType.Double ? $". Use a range such as {field}:[10 TO 20]." : "."))
        };

    private IndexFieldType TypeOf(string field)
    {
        if (_types.TryGetValue(field, out var type))
        {
            return type;
        }

        throw Invalid($"field {MessageText.Quote(field)} is not in the index; its fields are {string.Join(", ", _types.Keys.Order(StringComparer.Ordinal))}.");
    }

    private static bool Open(string? part) => part is null || part == "*";

    private long ParseLong(string field, string text) =>
        long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var value)
            ? value
            : throw Invalid($"{MessageText.Quote(text)} is not a whole number for long field {MessageText.Quote(field)}; use digits with an optional '-', e.g. {field}:42 or {field}:[10 TO 20].");

    private double ParseDouble(string field, string text) =>
        double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var value) && double.IsFinite(value)
            ? value
            : throw Invalid($"{MessageText.Quote(text)} is not a finite number for double field {MessageText.Quote(field)}; e.g. {field}:2.5 or {field}:[0 TO 99.5].");

    private string ParseBool(string field, string text) =>
        text is "true" or "false"
            ? text
            : throw Invalid($"{MessageText.Quote(text)} is not true or false for bool field {MessageText.Quote(field)}.");

    private InvalidQueryException Invalid(string problem) => new(_definition.Name, problem);

    // The parser's position (1-based) and a short problem; Lucene's own message lists every token
    // it could have expected, which says little to a person typing a query. The parser's token
    // columns are 0-based; the lexer's error columns are 1-based.
    private static (int Column, string Problem) Describe(string text, ParseException exception)
    {
        if (exception.InnerException is ParseException { CurrentToken.Next: { } next })
        {
            return next.Kind == 0
                ? (text.Length + 1, "the query ends where a term, a phrase or a closing bracket was expected")
                : (next.BeginColumn + 1, $"{MessageText.Quote(next.Image)} is not expected there");
        }

        var message = exception.InnerException?.Message ?? exception.Message;
        if (exception.InnerException is TokenMgrError && message.Contains("Encountered: <EOF>", StringComparison.Ordinal))
        {
            var quote = UnclosedQuote(text);
            return quote >= 0
                ? (quote + 1, "the phrase opened by this '\"' is never closed")
                : (text.Length + 1, "the query ends inside an unfinished term (a trailing '\\'?)");
        }

        var match = Regex.Match(message, @"column (\d+)", RegexOptions.CultureInvariant);
        var column = match.Success ? int.Parse(match.Groups[1].Value, CultureInfo.InvariantCulture) : 0;
        var colon = message.IndexOf("': ", StringComparison.Ordinal);
        return (column, colon >= 0 ? message[(colon + 3)..] : message);
    }

    // The classic parser descends once per '(' (and per range bracket): a text nested thousands
    // deep would take the thread's stack with it. Counted before parsing, like the parser's lexer
    // sees the text: escaped characters and phrases do not nest.
    private static void CheckNesting(string indexName, string text)
    {
        var depth = 0;
        var inPhrase = false;
        for (var i = 0; i < text.Length; i++)
        {
            switch (text[i])
            {
                case '\\':
                    i++;
                    break;
                case '"':
                    inPhrase = !inPhrase;
                    break;
                case '(' or '[' or '{' when !inPhrase:
                    if (++depth > IndexQuery.MaxNestingDepth)
                    {
                        throw new QuerySyntaxException(indexName, text, i + 1,
                            $"this {MessageText.Quote(text[i].ToString())} nests {depth} levels deep; at most {IndexQuery.MaxNestingDepth} levels of parentheses and brackets are allowed. " +
                            "Flatten the query (a long OR or AND needs no nesting).", inner: null);
                    }

                    break;
                case ')' or ']' or '}' when !inPhrase:
                    depth = Math.Max(0, depth - 1);
                    break;
            }
        }
    }

    // Index of the '"' that opens a phrase never closed, or -1.
    private static int UnclosedQuote(string text)
    {
        var open = -1;
        for (var i = 0; i < text.Length; i++)
        {
            if (text[i] == '\\')
            {
                i++;
            }
            else if (text[i] == '"')
            {
                open = open < 0 ? i : -1;
            }
        }

        return open;
    }
}
