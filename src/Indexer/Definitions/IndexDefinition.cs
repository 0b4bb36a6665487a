using System.Collections.Immutable;
using System.Text;

using Indexing.Storage;

namespace Indexing.Indexer;

/// <summary>An index: its name, the collection it covers and its fields. Immutable and validated.</summary>
/// <remarks>
/// Built only through <see cref="Parse(ReadOnlySpan{byte})"/>, <see cref="Parse(string)"/> or
/// <see cref="Create"/>, which check every rule and report all problems together in an
/// <see cref="IndexDefinitionException"/>; an instance is always valid. Thread-safe.
/// </remarks>
// Files: IndexDefinition.cs (entry points and values), .Json.cs (the JSON form, read and
// written), .Rules.cs (the rules every definition is checked against), .Hash.cs (canonical
// form and DefinitionHash).
public sealed partial class IndexDefinition
{
    private IndexDefinition(
        string name, string collection, ImmutableArray<IndexFieldDefinition> fields, ImmutableArray<FieldPath> paths)
    {
        Name = name;
        Collection = collection;
        Fields = fields;
        Paths = paths;
        DefinitionHash = ComputeHash();
    }

    /// <summary>The index's name, which is also its directory name.</summary>
    public string Name { get; }

    /// <summary>The collection whose documents the index covers (the id part before the first '/').</summary>
    public string Collection { get; }

    /// <summary>The fields, in the order the definition gives them; field numbers elsewhere are positions here.</summary>
    public ImmutableArray<IndexFieldDefinition> Fields { get; }

    /// <summary>
    /// SHA-256 of the canonical form, as 64 lowercase hex characters: equal for definitions that
    /// index the same content, different after any change that alters it. See <see cref="CanonicalForm"/>.
    /// </summary>
    public string DefinitionHash { get; }

    /// <summary>The parsed path of each field, parallel to <see cref="Fields"/>.</summary>
    internal ImmutableArray<FieldPath> Paths { get; }

    /// <summary>Builds a definition from values, checking the same rules as <see cref="Parse(string)"/>.</summary>
    /// <exception cref="IndexDefinitionException">A rule is broken; every problem is listed.</exception>
    public static IndexDefinition Create(string name, string collection, IEnumerable<IndexFieldDefinition> fields)
    {
        ArgumentNullException.ThrowIfNull(name);
        ArgumentNullException.ThrowIfNull(collection);
        ArgumentNullException.ThrowIfNull(fields);

        var drafts = new List<FieldDraft?>();
        foreach (var field in fields)
        {
            if (field?.Name is null || field.Path is null)
            {
                throw new ArgumentException(
                    $"fields[{drafts.Count}] is null or has a null Name or Path; every field needs a name and a path.", nameof(fields));
            }

            drafts.Add(new FieldDraft
            {
                Name = field.Name,
                Path = field.Path,
                Type = field.Type,
                Stored = field.Stored,
                Sortable = field.Sortable,
            });
        }

        return Build(name, collection, drafts, []);
    }

    /// <inheritdoc/>
    public override string ToString()
    {
        var text = new StringBuilder()
            .Append(Name).Append(" (collection ").Append(MessageText.Quote(Collection))
            .Append(", ").Append(Fields.Length).Append(Fields.Length == 1 ? " field" : " fields")
            .Append(", hash ").Append(DefinitionHash.AsSpan(0, 12)).Append(')');
        return text.ToString();
    }

    // Checks what was read (null values were missing or unreadable, and already reported) and
    // builds the definition, or throws with every problem: those found while reading first.
    private static IndexDefinition Build(
        string? name, string? collection, IReadOnlyList<FieldDraft?>? fields, List<IndexDefinitionProblem> problems)
    {
        CheckName(name, problems);
        CheckCollection(collection, problems);
        var paths = CheckFields(fields, problems);
        if (problems.Count > 0 || name is null || collection is null || fields is null)
        {
            throw new IndexDefinitionException(name, problems);
        }

        var built = ImmutableArray.CreateBuilder<IndexFieldDefinition>(fields.Count);
        foreach (var draft in fields)
        {
            // No problems means every draft was read whole.
            built.Add(new IndexFieldDefinition(draft!.Name!, draft.Path!, draft.Type!.Value, draft.Stored, draft.Sortable));
        }

        return new IndexDefinition(name, collection, built.MoveToImmutable(), paths);
    }

    // A field as read, before the rules: null members were missing or had the wrong JSON type.
    private sealed class FieldDraft
    {
        public string? Name { get; set; }

        public string? Path { get; set; }

        public IndexFieldType? Type { get; set; }

        public bool Stored { get; set; }

        public bool Sortable { get; set; }
    }
}
