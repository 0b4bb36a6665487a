using System.Collections;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.Json;

using Indexing.Storage;

namespace Indexing.Indexer;

/// <summary>
/// Finds the paths that hold strings in a collection's documents, to build a default index
/// definition that indexes every one of them as text, the way a search engine's dynamic mapping
/// would (Elasticsearch maps a new string field as text the first time it sees it).
/// </summary>
/// <remarks>
/// <para>
/// Paths follow the definition grammar: property names joined by '.', "[]" after a name whose
/// value was an array (arrays are flattened, so "tags[]" covers ["a", "b"] and "lines[].product"
/// covers an array of objects). The extractor flattens an array wherever it meets one, marked or
/// not, so a path with and without arrays is one path: "tags" holding "x" in one document and
/// ["y", "z"] in another is "tags[]", and "o.b" and "o[].b" are "o[].b". A segment is marked if
/// any document had an array there. A path counts once per document that has at least one string
/// there. A path is a string path if any document has a string at it, even when others hold
/// numbers there: those values are then mismatches of the text field, skipped and counted by the
/// indexer.
/// </para>
/// <para>
/// Property names a path cannot spell (containing '.', '[' or ']', control characters, whitespace
/// at either end, or an escaped unpaired surrogate) are skipped with their subtree and counted.
/// Memory is bounded: at most <see cref="MaxTrackedPaths"/> distinct paths are tracked. When the
/// table is full and a document has a string at a new path, the paths seen in one earlier document
/// only (and not yet in this one) are dropped to make room, once per document: they make poor
/// fields, and keeping them would let a map keyed by ids early in a collection keep out a common
/// field first seen later. Counts are then approximate: a dropped path seen again counts again
/// from that document, so it can rank below its true count. When nothing can be dropped (every
/// path was seen in two documents or more, or in this one), strings at new paths are counted in
/// <see cref="UntrackedStrings"/>, not tracked. Not thread-safe: one reader adds documents, then
/// builds the definition.
/// </para>
/// </remarks>
internal sealed class StringFieldSurvey
{
    /// <summary>Most distinct paths tracked; documents with more distinct string paths than this are unusual (maps keyed by ids).</summary>
    public const int MaxTrackedPaths = 10_000;

    /// <summary>Most fields a default definition gets, like Elasticsearch's default index.mapping.total_fields.limit.</summary>
    public const int DefaultMaxFields = 1_000;

    // Keyed by the path without its "[]" marks (see the remarks).
    private readonly Dictionary<string, TrackedPath> _paths = new(StringComparer.Ordinal);

    // The tracked paths the current document has a string at, each with the segments it met arrays at.
    private readonly Dictionary<TrackedPath, ulong> _seenInDocument = [];

    // The tracked paths seen in exactly one document, the ones a full table drops (see the remarks),
    // and whether the current document has already dropped them: once is enough, as no path becomes
    // droppable during a document.
    private readonly HashSet<TrackedPath> _inOneDocument = [];
    private bool _droppedInDocument;

    // The walk's position: the current value's path without marks, its number of segments, and
    // bit i set when segment i's value is an array the walk is in. A body is at most
    // DocumentBodies.MaxDepth (64) deep and segment i's array is at depth i + 2, so i < 63.
    private readonly StringBuilder _path = new();
    private int _segments;
    private ulong _arraySegments;

    /// <summary>A survey with no document yet.</summary>
    public StringFieldSurvey() => DocumentsByPath = new PathCounts(_paths);

    /// <summary>Documents added.</summary>
    public long Documents { get; private set; }

    /// <summary>Property names skipped (with their subtrees) because a path cannot spell them; counted once per occurrence.</summary>
    public long UnspellableProperties { get; private set; }

    /// <summary>
    /// String values at new paths met while <see cref="MaxTrackedPaths"/> paths were tracked and none
    /// could be dropped (see the remarks).
    /// </summary>
    public long UntrackedStrings { get; private set; }

    /// <summary>
    /// Distinct string paths found, with the number of documents holding a string at each. Keys are
    /// the paths as <see cref="ToDefinition"/> writes them (a segment marked "[]" if any document had
    /// an array there), so a field's path looks up its count. A view: it follows the documents added.
    /// </summary>
    public IReadOnlyDictionary<string, long> DocumentsByPath { get; }

    /// <summary>Adds one document (a JSON object, as the store keeps it).</summary>
    /// <exception cref="ArgumentException">
    /// The body is not a JSON object; a stored document always is. The document counts nothing, but
    /// paths it dropped to make room (see the remarks) stay dropped.
    /// </exception>
    public void Add(ReadOnlySpan<byte> utf8Json)
    {
        var unspellableBefore = UnspellableProperties;
        var untrackedBefore = UntrackedStrings;
        var reader = new Utf8JsonReader(utf8Json, DocumentBodies.ReaderOptions);
        try
        {
            if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            {
                throw new ArgumentException($"document #{Documents + 1} is not a JSON object; the store keeps only objects.", nameof(utf8Json));
            }

            _seenInDocument.Clear();
            _droppedInDocument = false;
            _path.Clear();
            _segments = 0;
            _arraySegments = 0;
            WalkObject(ref reader);
        }
        catch (JsonException e)
        {
            // Forget what the document had added, so no path is left tracked with no document.
            foreach (var path in _seenInDocument.Keys.Where(p => p.Documents == 0))
            {
                _paths.Remove(path.Unmarked);
            }

            _seenInDocument.Clear();
            UnspellableProperties = unspellableBefore;
            UntrackedStrings = untrackedBefore;
            throw new ArgumentException($"document #{Documents + 1} is not well-formed JSON: {e.Message}", nameof(utf8Json), e);
        }

        Documents++;
        foreach (var (path, arraySegments) in _seenInDocument)
        {
            path.Documents++;
            path.MarkArrays(arraySegments);
            if (path.Documents == 1)
            {
                _inOneDocument.Add(path);
            }
            else if (path.Documents == 2)
            {
                _inOneDocument.Remove(path);
            }
        }
    }

    /// <summary>
    /// A definition indexing the most common string paths as text, up to <paramref name="maxFields"/>
    /// (most documents first, then by path). Field names are the paths made valid: "[]" dropped,
    /// characters other than A-Z, a-z, 0-9, '_' and '.' replaced by '_', a leading digit or '.'
    /// prefixed with "f_", cut to 64 characters, and made unique ignoring case with a "_2", "_3" suffix.
    /// </summary>
    /// <exception cref="IndexDefinitionException">No string path was found (an index needs a field), or the name or collection breaks a rule.</exception>
    public IndexDefinition ToDefinition(string name, string collection, int maxFields = DefaultMaxFields)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(maxFields, 1);
        var chosen = _paths.Values
            .OrderByDescending(p => p.Documents)
            .ThenBy(p => p.Marked, StringComparer.Ordinal)
            .Take(maxFields)
            .Select(p => p.Marked)
            .ToList();
        if (chosen.Count == 0)
        {
            throw new IndexDefinitionException(name, [new IndexDefinitionProblem("fields",
                $"no string value was found in the {Documents:N0} documents of collection {MessageText.Quote(collection)}, so a default " +
                "definition (every string field as text) would have no field; write a definition file for the fields to index.")]);
        }

        var used = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        var fields = chosen.Select(path => new IndexFieldDefinition(UniqueName(FieldNameFor(path), used), path, IndexFieldType.Text));
        return IndexDefinition.Create(name, collection, fields);
    }

    /// <summary>The field name a path gets, before it is made unique (see <see cref="ToDefinition"/>).</summary>
    public static string FieldNameFor(string path)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        var name = new StringBuilder(path.Length);
        foreach (var c in path.Replace("[]", "", StringComparison.Ordinal))
        {
            name.Append(c is (>= 'a' and <= 'z') or (>= 'A' and <= 'Z') or (>= '0' and <= '9') or '_' or '.' ? c : '_');
        }

        if (name.Length == 0 || name[0] is (>= '0' and <= '9') or '.')
        {
            name.Insert(0, "f_");
        }
        else if (name.ToString().StartsWith(IndexDefinition.ReservedFieldPrefix, StringComparison.Ordinal))
        {
            name.Insert(0, 'f');
        }

        return name.Length <= IndexDefinition.MaxFieldNameLength ? name.ToString() : name.ToString(0, IndexDefinition.MaxFieldNameLength);
    }

    private static string UniqueName(string name, HashSet<string> used)
    {
        var candidate = name;
        for (var n = 2; !used.Add(candidate); n++)
        {
            var suffix = $"_{n}";
            candidate = name.Length + suffix.Length <= IndexDefinition.MaxFieldNameLength
                ? name + suffix
                : name[..(IndexDefinition.MaxFieldNameLength - suffix.Length)] + suffix;
        }

        return candidate;
    }

    // The reader is on a StartObject; returns on its EndObject. _path holds the object's own path.
    private void WalkObject(ref Utf8JsonReader reader)
    {
        var parentLength = _path.Length;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var name = NameOrNull(ref reader);
            reader.Read();
            if (name is null || !IsSpellable(name))
            {
                UnspellableProperties++;
                reader.Skip();
                continue;
            }

            if (parentLength > 0)
            {
                _path.Append('.');
            }

            _path.Append(name);
            _segments++;
            WalkValue(ref reader);
            _segments--;
            _path.Length = parentLength;
        }
    }

    // The reader is on a value; returns on its last token. _path is the value's path.
    private void WalkValue(ref Utf8JsonReader reader)
    {
        switch (reader.TokenType)
        {
            case JsonTokenType.StartObject:
                WalkObject(ref reader);
                break;
            case JsonTokenType.StartArray:
                var arraySegments = _arraySegments;
                _arraySegments |= 1UL << (_segments - 1); // arrays in arrays flatten into the same path
                while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
                {
                    WalkValue(ref reader);
                }

                _arraySegments = arraySegments;
                break;
            case JsonTokenType.String:
                RecordString();
                break;
            default:
                break; // numbers, booleans and null are not text
        }
    }

    private void RecordString()
    {
        var unmarked = _path.ToString();
        if (!_paths.TryGetValue(unmarked, out var path))
        {
            if (_paths.Count >= MaxTrackedPaths && !DropPathsInOneEarlierDocument())
            {
                UntrackedStrings++;
                return;
            }

            path = new TrackedPath(unmarked);
            _paths.Add(unmarked, path);
        }

        CollectionsMarshal.GetValueRefOrAddDefault(_seenInDocument, path, out _) |= _arraySegments;
    }

    // Drops the paths seen in one earlier document only, not in the current one; false when that
    // frees nothing. Costs one pass over those paths, at most once per document.
    private bool DropPathsInOneEarlierDocument()
    {
        if (_droppedInDocument)
        {
            return false;
        }

        _droppedInDocument = true;
        return _inOneDocument.RemoveWhere(Drop) > 0;

        // Removes the path from the table too when it goes.
        bool Drop(TrackedPath path) => !_seenInDocument.ContainsKey(path) && _paths.Remove(path.Unmarked);
    }

    // The property name the reader is on, or null when it is not Unicode text: a name that escapes
    // an unpaired surrogate ("\ud800") is strict JSON, so the store accepts it, but GetString throws
    // on it. No path can name it (see PathNode.FindEscapedChild), so it is unspellable.
    private static string? NameOrNull(ref Utf8JsonReader reader)
    {
        try
        {
            return reader.GetString();
        }
        catch (InvalidOperationException)
        {
            return null;
        }
    }

    // What FieldPath's grammar can name: no '.', '[' or ']', no control characters, no whitespace at
    // either end, not empty. (Unpaired surrogates cannot occur here: NameOrNull turns them away.)
    private static bool IsSpellable(string name) =>
        name.Length > 0
        && !char.IsWhiteSpace(name[0])
        && !char.IsWhiteSpace(name[^1])
        && !name.AsSpan().ContainsAny(".[]")
        && !name.Any(char.IsControl);

    // A tracked path: its text without marks, the segments any document had an array at, the text
    // with those marked "[]" (what the definition uses), and the documents with a string there.
    private sealed class TrackedPath(string unmarked)
    {
        private ulong _arraySegments;

        public string Unmarked { get; } = unmarked;

        public string Marked { get; private set; } = unmarked;

        public long Documents { get; set; }

        public void MarkArrays(ulong arraySegments)
        {
            if ((arraySegments & ~_arraySegments) == 0)
            {
                return;
            }

            _arraySegments |= arraySegments;
            // Splitting on '.' is safe: a name holding '.', '[' or ']' is unspellable, never in a path.
            var segments = Unmarked.Split('.');
            var marked = new StringBuilder(Unmarked.Length + 8);
            for (var i = 0; i < segments.Length; i++)
            {
                if (i > 0)
                {
                    marked.Append('.');
                }

                marked.Append(segments[i]);
                if (((_arraySegments >> i) & 1) != 0)
                {
                    marked.Append("[]");
                }
            }

            Marked = marked.ToString();
        }
    }

    // DocumentsByPath: the tracked paths keyed by their marked text. A key is found by its unmarked
    // text, then must equal the marked one exactly ("tags" does not find "tags[]").
    private sealed class PathCounts(Dictionary<string, TrackedPath> paths) : IReadOnlyDictionary<string, long>
    {
        public int Count => paths.Count;

        public IEnumerable<string> Keys => paths.Values.Select(p => p.Marked);

        public IEnumerable<long> Values => paths.Values.Select(p => p.Documents);

        public long this[string key] => TryGetValue(key, out var documents)
            ? documents
            : throw new KeyNotFoundException($"no string path {MessageText.Quote(key)} was found.");

        public bool ContainsKey(string key) => TryGetValue(key, out _);

        public bool TryGetValue(string key, out long value)
        {
            ArgumentNullException.ThrowIfNull(key);
            if (paths.TryGetValue(key.Replace("[]", "", StringComparison.Ordinal), out var path)
                && string.Equals(path.Marked, key, StringComparison.Ordinal))
            {
                value = path.Documents;
                return true;
            }

            value = 0;
            return false;
        }

        public IEnumerator<KeyValuePair<string, long>> GetEnumerator() =>
            paths.Values.Select(p => KeyValuePair.Create(p.Marked, p.Documents)).GetEnumerator();

        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
    }
}
