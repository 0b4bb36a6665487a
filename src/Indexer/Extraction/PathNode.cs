using System.Text;
using System.Text.Json;

namespace Indexing.Indexer;

// One node of the trie FieldExtractor compiles the definition's paths into: the property it
// stands for, the fields whose path ends here, and the properties below it that some path
// needs. Fields sharing a prefix share nodes ("lines[].product" and "lines[].quantity" share
// "lines"), so a document is walked once however many fields there are. A path's "[]" marks
// do not appear here: arrays are iterated wherever they are met.
//
// Mutable only while the FieldExtractor constructor builds it; read-only (and so safe to share
// between threads) once the extractor is published.
internal sealed class PathNode
{
    private PathNode[] _children = [];
    private int[] _fields = [];

    public PathNode(string name)
    {
        Name = name;
        Utf8Name = Encoding.UTF8.GetBytes(name);
    }

    public string Name { get; }

    public byte[] Utf8Name { get; }

    public ReadOnlySpan<PathNode> Children => _children;

    /// <summary>Numbers of the fields whose path ends at this node.</summary>
    public ReadOnlySpan<int> Fields => _fields;

    public PathNode GetOrAddChild(string name)
    {
        foreach (var child in _children)
        {
            if (string.Equals(child.Name, name, StringComparison.Ordinal))
            {
                return child;
            }
        }

        var added = new PathNode(name);
        _children = [.. _children, added];
        return added;
    }

    public void AddField(int field) => _fields = [.. _fields, field];

    /// <summary>The child named by the property the reader is on, or null when no path goes there.</summary>
    /// <remarks>A linear scan: nodes have few children, and most comparisons stop at the length.</remarks>
    public PathNode? FindChild(ref Utf8JsonReader reader)
    {
        if (reader.ValueIsEscaped)
        {
            return FindEscapedChild(ref reader);
        }

        var name = reader.ValueSpan;
        foreach (var child in _children)
        {
            if (name.SequenceEqual(child.Utf8Name))
            {
                return child;
            }
        }

        return null;
    }

    // A name the document wrote with escapes ("cl\u00e9") is unescaped to compare. One that
    // escapes an unpaired surrogate makes ValueTextEquals throw; it is not Unicode text, so no
    // path (always valid Unicode) names it.
    private PathNode? FindEscapedChild(ref Utf8JsonReader reader)
    {
        try
        {
            foreach (var child in _children)
            {
                if (reader.ValueTextEquals(child.Utf8Name))
                {
                    return child;
                }
            }
        }
        catch (InvalidOperationException)
        {
        }

        return null;
    }
}
