using System.Collections.Frozen;

using Indexing.Storage;

namespace Indexing.Indexer;

// What a query may name on one index, from its definition alone (no engine involved): the
// definition's fields plus the two the indexer adds (__id as a keyword field, __etag as a long
// field), the default field, and sort keys (sortable fields only). A request the definition cannot
// answer is an InvalidQueryException naming the index. Immutable: one per index, shared by every query.
internal sealed class QueryFields
{
    private readonly IndexDefinition _definition;
    private readonly string _defaultField;

    public QueryFields(IndexDefinition definition)
    {
        _definition = definition;
        var types = definition.Fields.ToDictionary(f => f.Name, f => f.Type, StringComparer.Ordinal);
        types[IndexFieldNames.Id] = IndexFieldType.Keyword;
        types[IndexFieldNames.Etag] = IndexFieldType.Long;
        Types = types.ToFrozenDictionary(StringComparer.Ordinal);
        _defaultField = (definition.Fields.FirstOrDefault(f => f.Type == IndexFieldType.Text) ?? definition.Fields[0]).Name;
    }

    /// <summary>Every field a query may name, with its type.</summary>
    public FrozenDictionary<string, IndexFieldType> Types { get; }

    /// <summary>The field that terms without a field name search: the query's, else the definition's first text field (else its first field).</summary>
    /// <exception cref="InvalidQueryException">The query names a default field the index does not have.</exception>
    public string DefaultField(IndexQuery query)
    {
        var field = query.DefaultField ?? _defaultField;
        return Types.ContainsKey(field)
            ? field
            : throw new InvalidQueryException(
                _definition.Name, $"default field {MessageText.Quote(field)} is not in the index; its fields are {string.Join(", ", Types.Keys.Order(StringComparer.Ordinal))}.");
    }

    /// <summary>The definitions of the sort keys' fields, in order; empty for relevance order.</summary>
    /// <exception cref="ArgumentException">A sort key is null.</exception>
    /// <exception cref="InvalidQueryException">
    /// More keys than <paramref name="maxKeys"/>, a field named twice, or a key naming a field that is not in the index or not sortable.
    /// </exception>
    public IndexFieldDefinition[] SortFields(IReadOnlyList<QuerySort>? keys, int maxKeys)
    {
        if (keys is null || keys.Count == 0)
        {
            return [];
        }

        // Counted before anything per key: the engine's collector holds a slot per hit for every key.
        if (keys.Count > maxKeys)
        {
            throw new InvalidQueryException(
                _definition.Name, $"the query has {keys.Count:N0} sort keys; at most {maxKeys} are allowed (MaxSortKeys). Sort by fewer fields.");
        }

        var fields = new IndexFieldDefinition[keys.Count];
        for (var i = 0; i < keys.Count; i++)
        {
            var key = keys[i] ?? throw new ArgumentException($"sort key {i} is null.", nameof(keys));
            for (var j = 0; j < i; j++)
            {
                // A second key on the same field can never break a tie the first left: it only costs memory.
                if (keys[j].Field == key.Field)
                {
                    throw new InvalidQueryException(
                        _definition.Name, $"sort field {MessageText.Quote(key.Field)} is given twice (keys {j + 1} and {i + 1}); each field may be a sort key once. Remove the repeated key.");
                }
            }

            var definition = _definition.Fields.FirstOrDefault(f => f.Name == key.Field);
            if (definition is null || !definition.Sortable)
            {
                var sortable = _definition.Fields.Where(f => f.Sortable).Select(f => f.Name).ToList();
                throw new InvalidQueryException(
                    _definition.Name,
                    (definition is null ? $"sort field {MessageText.Quote(key.Field)} is not in the index" : $"field {MessageText.Quote(key.Field)} is not sortable") +
                    (sortable.Count == 0 ? "; no field of this index is sortable (set \"sortable\": true in the definition and rebuild)." : $"; sortable fields: {string.Join(", ", sortable)}."));
            }

            fields[i] = definition;
        }

        return fields;
    }
}
