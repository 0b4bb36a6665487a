using System.Buffers;
using System.Runtime.CompilerServices;
using System.Text;
using System.Text.Json;

using Indexing.Storage;

namespace Indexing.Indexer;

// One document's extracted values, per field in document order, and the values skipped as
// mismatches. A reusable buffer: FieldExtractor.Extract clears it first, so one buffer per
// indexing thread serves every document, allocating nothing beyond the strings themselves once
// its arrays have grown. Values are held in typed arrays (no boxing) and read as spans.
//
//
// Large text (a buffer made with streamLargeText, as the indexer's are): a string value of
// LargeTextBytes or more for a text field that is not stored is not made a string (twice its UTF-8
// size, a new object on the large object heap for every giant document) but unescaped as UTF-8
// into one pooled buffer, which the engine reads through a TextReader. Those values are listed
// apart (LargeTextCount), after the field's strings: a text field has no order between its values
// beyond the position gap, so only the order of a field's analysed values changes.
//
// Threading: one owner at a time; not thread-safe. The FieldExtractor that fills it is shared.
internal sealed class ExtractedFields
{
    /// <summary>Mismatches kept with details per document; more are only counted, so a huge array of bad values costs no allocations.</summary>
    public const int MaxRecordedMismatches = 16;

    /// <summary>
    /// JSON bytes from which a text value is taken as UTF-8 rather than as a string: 32 KiB, a string
    /// of up to 64 KiB, so the strings that stay are below the large object heap's 85,000 bytes.
    /// </summary>
    public const int LargeTextBytes = 32 << 10;

    private readonly Column[] _columns;
    private readonly bool[] _streamsLargeText;
    private readonly List<LargeTextValue> _largeValues = [];
    private byte[] _largeText = [];
    private int _largeTextUsed;
    private readonly List<FieldValueMismatch> _mismatches = [];

    // Where the walk is in the document, for mismatch paths: property names and array
    // positions. A document is at most DocumentBodies.MaxDepth deep, so this never grows.
    private readonly PathStep[] _path = new PathStep[DocumentBodies.MaxDepth + 1];
    private int _pathDepth;

    public ExtractedFields(IndexDefinition definition, bool streamLargeText = false)
    {
        ArgumentNullException.ThrowIfNull(definition);
        Definition = definition;
        _streamsLargeText = [.. definition.Fields.Select(f => streamLargeText && f.Type == IndexFieldType.Text && !f.Stored)];
        _columns = new Column[definition.Fields.Length];
        for (var i = 0; i < _columns.Length; i++)
        {
            _columns[i] = definition.Fields[i].Type switch
            {
                IndexFieldType.Text or IndexFieldType.Keyword => new Column<string>(),
                IndexFieldType.Long => new Column<long>(),
                IndexFieldType.Double => new Column<double>(),
                _ => new Column<bool>(),
            };
        }
    }

    public IndexDefinition Definition { get; }

    /// <summary>Values skipped in the last document, all counted, including those past <see cref="MaxRecordedMismatches"/>.</summary>
    public int MismatchCount { get; private set; }

    /// <summary>The first <see cref="MaxRecordedMismatches"/> skipped values of the last document, in document order.</summary>
    public IReadOnlyList<FieldValueMismatch> Mismatches => _mismatches;

    /// <summary>How many values field number <paramref name="field"/> took from the last document.</summary>
    public int Count(int field) => _columns[field].Count;

    /// <summary>The values of a text or keyword field.</summary>
    public ReadOnlySpan<string> Strings(int field) => Typed<string>(field).Values;

    /// <summary>Large text values of the last document (see the type's comment), listed apart from <see cref="Strings"/>.</summary>
    public int LargeTextCount => _largeValues.Count;

    /// <summary>The field of large text value number <paramref name="value"/>.</summary>
    public int LargeTextField(int value) => _largeValues[value].Field;

    /// <summary>Large text value number <paramref name="value"/>, unescaped UTF-8; valid until the next <see cref="FieldExtractor.Extract"/> into this buffer.</summary>
    public ReadOnlyMemory<byte> LargeText(int value) => _largeText.AsMemory(_largeValues[value].Start, _largeValues[value].Length);

    /// <summary>The values of a long field.</summary>
    public ReadOnlySpan<long> Longs(int field) => Typed<long>(field).Values;

    /// <summary>The values of a double field.</summary>
    public ReadOnlySpan<double> Doubles(int field) => Typed<double>(field).Values;

    /// <summary>The values of a bool field.</summary>
    public ReadOnlySpan<bool> Bools(int field) => Typed<bool>(field).Values;

    internal void Clear()
    {
        foreach (var column in _columns)
        {
            column.Clear();
        }

        _mismatches.Clear();
        MismatchCount = 0;
        _pathDepth = 0;
        _largeValues.Clear();
        _largeTextUsed = 0;
        if (_largeText.Length > 0)
        {
            // Back to the pool between documents: most have no large text, and a giant one must not
            // keep its size in every thread's buffer.
            ArrayPool<byte>.Shared.Return(_largeText);
            _largeText = [];
        }
    }

    // The reader is on a scalar of a text field: takes it as large text when it is one (see the type's
    // comment). False when it is not, or when it escapes an unpaired surrogate: the string path then
    // reports it as a mismatch.
    internal bool TryAddLargeText(int field, ref Utf8JsonReader reader)
    {
        if (!_streamsLargeText[field] || reader.TokenType != JsonTokenType.String || reader.ValueSpan.Length < LargeTextBytes)
        {
            return false;
        }

        // Unescaping never lengthens a value.
        EnsureLargeText(_largeTextUsed + reader.ValueSpan.Length);
        int written;
        try
        {
            written = reader.CopyString(_largeText.AsSpan(_largeTextUsed));
        }
        catch (InvalidOperationException)
        {
            return false;
        }

        _largeValues.Add(new LargeTextValue(field, _largeTextUsed, written));
        _largeTextUsed += written;
        return true;
    }

    private void EnsureLargeText(int bytes)
    {
        if (_largeText.Length >= bytes)
        {
            return;
        }

        var larger = ArrayPool<byte>.Shared.Rent(Math.Max(bytes, _largeText.Length * 2));
        _largeText.AsSpan(0, _largeTextUsed).CopyTo(larger);
        if (_largeText.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(_largeText);
        }

        _largeText = larger;
    }

    internal void Add(int field, string value) => Typed<string>(field).Add(value);

    internal void Add(int field, long value) => Typed<long>(field).Add(value);

    internal void Add(int field, double value) => Typed<double>(field).Add(value);

    internal void Add(int field, bool value) => Typed<bool>(field).Add(value);

    internal void PushProperty(string name) => _path[_pathDepth++] = new PathStep(name, -1);

    internal void PushIndex(int index) => _path[_pathDepth++] = new PathStep(null, index);

    internal void Pop() => _pathDepth--;

    /// <summary>Counts a mismatch at the current path; true when its details should be recorded (its reason built).</summary>
    internal bool CountMismatch() => ++MismatchCount <= MaxRecordedMismatches;

    internal void RecordMismatch(int field, string reason) =>
        _mismatches.Add(new FieldValueMismatch(Definition.Fields[field].Name, CurrentPath(), reason));

    private string CurrentPath()
    {
        var text = new StringBuilder();
        for (var i = 0; i < _pathDepth; i++)
        {
            var step = _path[i];
            if (step.Property is null)
            {
                text.Append('[').Append(step.Index).Append(']');
            }
            else
            {
                text.Append(i == 0 ? "" : ".").Append(step.Property);
            }
        }

        return text.ToString();
    }

    private Column<T> Typed<T>(int field) =>
        _columns[field] as Column<T> ?? throw new InvalidOperationException(
            $"field {field} ('{Definition.Fields[field].Name}') is a {IndexFieldTypes.Name(Definition.Fields[field].Type)} field, " +
            $"so its values are not {typeof(T).Name}; read text and keyword fields with {nameof(Strings)}, long with {nameof(Longs)}, " +
            $"double with {nameof(Doubles)}, bool with {nameof(Bools)}.");

    private readonly record struct LargeTextValue(int Field, int Start, int Length);

    // A property name, or an array position when Property is null.
    private readonly record struct PathStep(string? Property, int Index);

    private abstract class Column
    {
        public int Count { get; protected set; }

        public abstract void Clear();
    }

    private sealed class Column<T> : Column
    {
        private const int MaxKeptCapacity = 4096;

        private T[] _items = [];

        public ReadOnlySpan<T> Values => _items.AsSpan(0, Count);

        public void Add(T value)
        {
            if (Count == _items.Length)
            {
                Array.Resize(ref _items, Math.Max(4, _items.Length * 2));
            }

            _items[Count++] = value;
        }

        public override void Clear()
        {
            if (_items.Length > MaxKeptCapacity)
            {
                // One document with a huge array must not pin that much memory in every
                // thread's buffer for the rest of the run.
                _items = [];
            }
            else if (RuntimeHelpers.IsReferenceOrContainsReferences<T>())
            {
                // Drops the last document's strings so they can be collected.
                Array.Clear(_items, 0, Count);
            }

            Count = 0;
        }
    }
}
