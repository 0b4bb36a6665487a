using System.Text;
using System.Text.Json;

using Indexing.Storage;

namespace Indexing.Indexer;

// Takes the values of every field of one index definition out of a JSON document in one pass.
//
// The constructor compiles the fields' paths into a trie (PathNode); Extract walks the document
// once with a Utf8JsonReader, following only properties some path needs and skipping every
// other subtree whole, so the cost depends on the document's size and the trie, not on how many
// fields share a prefix.
//
// Semantics, like Elasticsearch's:
// - Arrays are flattened: an array met anywhere on a path, marked with "[]" or not, and arrays
//   nested in arrays, give one value per scalar element. "[]" documents intent only; being
//   lenient lets a field hold one value in some documents and several in others.
// - null, a missing property, or a scalar where the path needs an object to go on, give no
//   value: the document simply lacks the field.
// - A value of the wrong kind for the field (see FieldExtractor.Values.cs) is a mismatch:
//   skipped, counted and described in the ExtractedFields, never fatal.
//
// Threading: immutable after construction; Extract may run on any number of threads at once,
// each with its own ExtractedFields.
// Files: FieldExtractor.cs (trie and walk), FieldExtractor.Values.cs (type conversion and
// mismatch reasons), JsonIntegers.cs (exact integral test for long fields).
internal sealed partial class FieldExtractor
{
    private readonly PathNode _root = new("");
    private readonly IndexFieldType[] _types;

    public FieldExtractor(IndexDefinition definition)
    {
        ArgumentNullException.ThrowIfNull(definition);
        Definition = definition;
        _types = new IndexFieldType[definition.Fields.Length];
        for (var field = 0; field < _types.Length; field++)
        {
            _types[field] = definition.Fields[field].Type;
            var node = _root;
            foreach (var segment in definition.Paths[field].Segments)
            {
                node = node.GetOrAddChild(segment.Name);
            }

            node.AddField(field);
        }
    }

    public IndexDefinition Definition { get; }

    /// <summary>
    /// A buffer for <see cref="Extract"/>; keep one per thread and reuse it for every document. With
    /// <paramref name="streamLargeText"/>, large values of unstored text fields are kept as UTF-8
    /// (<see cref="ExtractedFields.LargeText"/>) instead of strings.
    /// </summary>
    public ExtractedFields CreateBuffer(bool streamLargeText = false) => new(Definition, streamLargeText);

    /// <summary>Replaces the contents of <paramref name="into"/> with the values of <paramref name="utf8Json"/>.</summary>
    /// <exception cref="InvalidDataException">
    /// The body is not a well-formed JSON object. The store validates bodies when they are
    /// written, so this means a corrupt or foreign body; <paramref name="into"/> is left empty.
    /// </exception>
    public void Extract(ReadOnlySpan<byte> utf8Json, ExtractedFields into)
    {
        ArgumentNullException.ThrowIfNull(into);
        if (!ReferenceEquals(into.Definition, Definition))
        {
            throw new ArgumentException(
                $"the buffer was made for index '{into.Definition.Name}', but this extractor is for '{Definition.Name}'; " +
                $"use {nameof(CreateBuffer)} of this extractor.", nameof(into));
        }

        into.Clear();
        var reader = new Utf8JsonReader(utf8Json, DocumentBodies.ReaderOptions);
        try
        {
            if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            {
                var root = reader.TokenType switch
                {
                    JsonTokenType.StartArray => "an array",
                    JsonTokenType.String => "a string",
                    JsonTokenType.Number => "a number",
                    JsonTokenType.Null => "null",
                    _ => "true or false",
                };
                throw Corrupt($"its root is {root}, not an object", null);
            }

            WalkObject(ref reader, _root, into);
            // On a final block this throws for anything but whitespace after the root object.
            reader.Read();
        }
        catch (JsonException exception)
        {
            into.Clear();
            throw Corrupt($"it is not well-formed JSON at line {exception.LineNumber + 1}, byte {exception.BytePositionInLine + 1}", exception);
        }
        catch (InvalidOperationException exception) when (exception.InnerException is DecoderFallbackException)
        {
            // Utf8JsonReader.GetString throws this for a string that is not valid UTF-8.
            into.Clear();
            throw Corrupt($"a string in it is not valid UTF-8 (near byte {reader.TokenStartIndex})", exception);
        }
    }

    // The reader is on the first token of a value that node stands for.
    private void WalkValue(ref Utf8JsonReader reader, PathNode node, ExtractedFields into)
    {
        switch (reader.TokenType)
        {
            case JsonTokenType.StartObject:
                if (!node.Fields.IsEmpty)
                {
                    ObjectMismatch(node, into);
                }

                if (node.Children.IsEmpty)
                {
                    reader.Skip();
                }
                else
                {
                    WalkObject(ref reader, node, into);
                }

                break;

            case JsonTokenType.StartArray:
                var index = 0;
                while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
                {
                    into.PushIndex(index++);
                    WalkValue(ref reader, node, into);
                    into.Pop();
                }

                break;

            case JsonTokenType.Null:
                break;

            default:
                if (!node.Fields.IsEmpty)
                {
                    TakeScalar(ref reader, node, into);
                }

                break;
        }
    }

    // The reader is on the object's StartObject; leaves it on the matching EndObject.
    private void WalkObject(ref Utf8JsonReader reader, PathNode node, ExtractedFields into)
    {
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var child = node.FindChild(ref reader);
            reader.Read();
            if (child is null)
            {
                // No path goes here: skip the whole subtree (a no-op for a scalar).
                reader.Skip();
                continue;
            }

            into.PushProperty(child.Name);
            WalkValue(ref reader, child, into);
            into.Pop();
        }
    }

    private static InvalidDataException Corrupt(string problem, Exception? inner) =>
        new($"document body cannot be indexed: {problem}. The store validates bodies when they are written, " +
            "so it holds a corrupt body or one written around it; check the document and what wrote it.", inner);
}
