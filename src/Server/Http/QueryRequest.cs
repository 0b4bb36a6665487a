using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using Indexing.Indexer;
using Indexing.Storage;
using Microsoft.AspNetCore.Http;

namespace Indexing.Server.Http;

/// <summary>
/// The query string of <c>GET /indexes/{name}/query</c>: <c>q</c> (Lucene classic syntax, required),
/// <c>take</c>, <c>skip</c>, <c>sort</c> (comma-separated fields, '-' before a field for descending)
/// and <c>include=docs</c>. The ranges of take and skip are the index's own rules (it names them).
/// </summary>
internal static class QueryRequest
{
    private static readonly string[] _known = ["q", "take", "skip", "sort", "include"];

    public static bool TryParse(
        IQueryCollection parameters, [NotNullWhen(true)] out IndexQuery? query, out bool includeDocuments, [NotNullWhen(false)] out string? problem)
    {
        query = null;
        includeDocuments = false;
        if (parameters.Keys.FirstOrDefault(k => !_known.Contains(k)) is { } unknown)
        {
            problem = $"unknown query parameter {MessageText.Quote(unknown)}; the parameters are q, take, skip, sort and include.";
            return false;
        }

        if (parameters.Keys.FirstOrDefault(k => parameters[k].Count > 1) is { } repeated)
        {
            problem = $"query parameter {MessageText.Quote(repeated)} is given {parameters[repeated].Count} times; give it once.";
            return false;
        }

        var text = parameters["q"].ToString();
        if (string.IsNullOrWhiteSpace(text))
        {
            problem = "the query text q is missing or empty; give Lucene classic syntax, e.g. q=status:shipped, or q=*:* for every document.";
            return false;
        }

        var take = 20;
        var skip = 0;
        if (!TryInt(parameters, "take", ref take, out problem) || !TryInt(parameters, "skip", ref skip, out problem))
        {
            return false;
        }

        var include = parameters["include"].ToString();
        if (include is not ("" or "docs"))
        {
            problem = $"include is {MessageText.Quote(include)}; the only value is 'docs' (return each hit's document), or leave it out.";
            return false;
        }

        var sort = new List<string>();
        foreach (var key in parameters["sort"].ToString().Split(',', StringSplitOptions.TrimEntries))
        {
            if (key.Length == 0 && parameters["sort"].ToString().Length == 0)
            {
                break;
            }

            var field = key.StartsWith('-') ? key[1..] : key;
            if (field.Length == 0)
            {
                problem = $"sort {MessageText.Quote(parameters["sort"].ToString())} has an empty key; write field names separated by commas, '-' before one for descending, e.g. sort=-total,id.";
                return false;
            }

            sort.Add(key);
        }

        query = new IndexQuery(text) { Take = take, Skip = skip, Sort = sort };
        includeDocuments = include == "docs";
        problem = null;
        return true;
    }

    private static bool TryInt(IQueryCollection parameters, string name, ref int value, [NotNullWhen(false)] out string? problem)
    {
        problem = null;
        if (!parameters.TryGetValue(name, out var text))
        {
            return true;
        }

        if (int.TryParse(text.ToString(), NumberStyles.None, CultureInfo.InvariantCulture, out value))
        {
            return true;
        }

        problem = $"{name} is {MessageText.Quote(text.ToString())}; it must be a whole number (take 1 to {IndexQuery.MaxTake}, skip 0 or more).";
        return false;
    }
}
