using System.Collections.Immutable;
using System.Diagnostics.CodeAnalysis;
using System.Text;

using Indexing.Storage;

namespace Indexing.Indexer;

// The rules a definition must follow. Each check adds every problem it finds and goes on, so
// one round trip shows a user everything to fix.
public sealed partial class IndexDefinition
{
    /// <summary>Longest index name, in characters (all ASCII).</summary>
    public const int MaxNameLength = 64;

    /// <summary>Longest field name, in characters (all ASCII).</summary>
    public const int MaxFieldNameLength = 64;

    /// <summary>Field names starting with this are reserved for the fields the indexer adds itself (document id, etag).</summary>
    public const string ReservedFieldPrefix = "__";

    /// <summary>
    /// Longest collection name in UTF-8 bytes: an id is "collection/key" within
    /// <see cref="DocumentIds.MaxIdBytes"/> bytes, so no document's collection is longer.
    /// </summary>
    public const int MaxCollectionBytes = DocumentIds.MaxIdBytes - 1;

    private const string NameRule =
        "an index name is 1 to 64 characters from a-z, 0-9, '_' and '-', starting with a letter or digit, " +
        "because it names the index's directory";

    private const string FieldNameRule =
        "a field name is 1 to 64 characters from A-Z, a-z, 0-9, '_' and '.', starting with a letter or '_', " +
        "so that queries can name it without quoting";

    /// <summary>
    /// Whether <paramref name="name"/> may name an index (lookups check this before touching any
    /// path, so '..', '/', an empty name and the like are refused); <paramref name="problem"/> says why not.
    /// </summary>
    public static bool IsValidName([NotNullWhen(true)] string? name, [NotNullWhen(false)] out string? problem)
    {
        var problems = new List<IndexDefinitionProblem>();
        CheckName(name ?? string.Empty, problems);
        problem = problems.Count == 0 ? null : problems[0].Message;
        return problem is null;
    }

    private static void CheckName(string? name, List<IndexDefinitionProblem> problems)
    {
        if (name is null)
        {
            return;
        }

        var reason = NameProblem(name, MaxNameLength, IsNameStart, static c => IsNameStart(c) || c is '_' or '-');
        if (reason is not null)
        {
            problems.Add(new("name",
                $"index name {MessageText.Quote(name)} {reason}; {NameRule}. Choose a name such as 'orders-by-customer'."));
        }

        static bool IsNameStart(char c) => c is (>= 'a' and <= 'z') or (>= '0' and <= '9');
    }

    // The collection must be one that DocumentIds.GetCollection can return for a valid id, so
    // Storage's id rules decide, applied to the shortest id in that collection ("collection/").
    private static void CheckCollection(string? collection, List<IndexDefinitionProblem> problems)
    {
        if (collection is null)
        {
            return;
        }

        const string Rule = "a collection is the part of a document id before the first '/', e.g. 'orders' for 'orders/17'";
        var quoted = MessageText.Quote(collection);
        string? message = null;
        var slash = collection.IndexOf('/');
        if (collection.Length == 0)
        {
            message = $"collection is empty; {Rule}. Name the collection the index covers.";
        }
        else if (slash >= 0)
        {
            message = $"collection {quoted} contains '/' at character {slash + 1}; {Rule}, so it cannot contain one. " +
                $"Did you mean {MessageText.Quote(collection[..slash])}?";
        }
        else if (!DocumentIds.TryValidate(collection + "/", out var error))
        {
            message = error.Rule switch
            {
                DocumentValidationRule.IdTooLong =>
                    $"collection {quoted} is {Encoding.UTF8.GetByteCount(collection):N0} UTF-8 bytes; ids are 'collection/key' within " +
                    $"{DocumentIds.MaxIdBytes} bytes, so a collection is at most {MaxCollectionBytes}. No document can be in it; use the collection's real name.",
                DocumentValidationRule.IdControlCharacter =>
                    $"collection {quoted} contains a control character, which document ids cannot contain, so no document can be in it. Remove it.",
                DocumentValidationRule.IdInvalidUnicode =>
                    $"collection {quoted} contains an unpaired surrogate, which document ids cannot contain, so no document can be in it. Fix the text.",
                _ => $"collection {quoted} cannot be the collection of any document: {error.Message}",
            };
        }

        if (message is not null)
        {
            problems.Add(new("collection", message));
        }
    }

    private static ImmutableArray<FieldPath> CheckFields(IReadOnlyList<FieldDraft?>? fields, List<IndexDefinitionProblem> problems)
    {
        if (fields is null)
        {
            return [];
        }

        if (fields.Count == 0)
        {
            problems.Add(new("fields",
                "an index needs at least one field; add one, e.g. { \"name\": \"customer\", \"path\": \"customer.name\", \"type\": \"keyword\" }."));
            return [];
        }

        var paths = ImmutableArray.CreateBuilder<FieldPath>(fields.Count);
        // Case-insensitive, so a name differing from an earlier one only by case is found too.
        var firstByName = new Dictionary<string, (int Index, string Name)>(StringComparer.OrdinalIgnoreCase);
        for (var i = 0; i < fields.Count; i++)
        {
            var field = fields[i];
            if (field is null)
            {
                continue;
            }

            var at = $"fields[{i}].";
            if (field.Name is not null)
            {
                CheckFieldName(field.Name, at, i, firstByName, problems);
            }

            if (field.Path is not null)
            {
                if (FieldPath.TryParse(field.Path, out var path, out var error))
                {
                    paths.Add(path!);
                }
                else
                {
                    problems.Add(new(at + "path", error!));
                }
            }

            if (field.Type is { } type && !IndexFieldTypes.IsDefined(type))
            {
                problems.Add(new(at + "type", $"unknown field type {(int)type}; the types are {IndexFieldTypes.AllowedNames}."));
            }

            if (field.Sortable && field.Type == IndexFieldType.Text)
            {
                problems.Add(new(at + "sortable",
                    $"text field {MessageText.Quote(field.Name ?? "")} cannot be sortable: text is split into words, which have no order " +
                    "as a whole value. Make it a keyword field to sort by the exact value, or add a second, keyword field on the same path to sort by."));
            }
        }

        return paths.Count == fields.Count ? paths.MoveToImmutable() : [];
    }

    private static void CheckFieldName(
        string name, string at, int index, Dictionary<string, (int Index, string Name)> firstByName, List<IndexDefinitionProblem> problems)
    {
        var quoted = MessageText.Quote(name);
        var reason = NameProblem(name, MaxFieldNameLength, IsFieldNameStart, static c => IsFieldNameStart(c) || c is (>= '0' and <= '9') or '.');
        if (reason is not null)
        {
            problems.Add(new(at + "name", $"field name {quoted} {reason}; {FieldNameRule}. Rename the field."));
        }
        else if (name.StartsWith(ReservedFieldPrefix, StringComparison.Ordinal))
        {
            problems.Add(new(at + "name",
                $"field name {quoted} starts with '{ReservedFieldPrefix}', which is reserved for the fields the indexer adds itself " +
                "(document id, etag). Rename the field."));
        }
        else if (firstByName.TryGetValue(name, out var first))
        {
            var other = $"fields[{first.Index}]";
            // A case-only difference is refused too: a query naming one field would be read as
            // the other by anyone who does not spot the case, and a case-insensitive sink (or
            // file system) could not keep them apart.
            problems.Add(new(at + "name", string.Equals(name, first.Name, StringComparison.Ordinal)
                ? $"field name {quoted} is already used by {other}; each field needs its own name. Rename or remove one."
                : $"field name {quoted} differs from {other}'s {MessageText.Quote(first.Name)} only by case; names must differ " +
                    "in more than case so a query cannot be read as naming the other field. Rename one."));
        }
        else
        {
            firstByName.Add(name, (index, name));
        }

        static bool IsFieldNameStart(char c) => c is (>= 'a' and <= 'z') or (>= 'A' and <= 'Z') or '_';
    }

    // Why name breaks a "first character, then more characters, at most maxLength" rule, or null.
    private static string? NameProblem(string name, int maxLength, Func<char, bool> isFirst, Func<char, bool> isRest)
    {
        if (name.Length == 0)
        {
            return "is empty";
        }

        if (name.Length > maxLength)
        {
            return $"is {name.Length} characters long, over the limit of {maxLength}";
        }

        for (var i = 0; i < name.Length; i++)
        {
            if (!(i == 0 ? isFirst(name[i]) : isRest(name[i])))
            {
                var c = name[i];
                var shown = char.IsControl(c) || char.IsWhiteSpace(c) || char.IsSurrogate(c) || c > '~' ? $"U+{(int)c:X4}" : $"'{c}'";
                return i == 0 ? $"starts with {shown}" : $"has {shown} at character {i + 1}";
            }
        }

        return null;
    }
}
