using System.Runtime.InteropServices;
using System.Text;

namespace Indexing.Storage.Tests.Store;

// A snapshot's bulk reads copy each body into the caller's array when given a BodyBuffer: the body
// is the start of that array, byte for byte, and an array too short is refused.
public sealed class SnapshotBodyBufferTests
{
    [Fact]
    public void MultiGetAndReadRange_WithABuffer_CopyEachBodyToTheStartOfItsArray()
    {
        using var temp = new TempStore();
        var written = new Dictionary<string, byte[]>();
        for (var i = 0; i < 6; i++)
        {
            var id = $"c/{i}";
            written[id] = Encoding.UTF8.GetBytes($$"""{"n":{{i}},"pad":"{{new string('x', 1000 * i)}}"}""");
            temp.Store.Put(id, written[id]);
        }

        var lent = new List<byte[]>();
        byte[] Buffer(int length)
        {
            // Longer than asked and not zeroed, as a pool's array would be.
            var array = new byte[length + 100];
            Array.Fill(array, (byte)0xEE);
            lent.Add(array);
            return array;
        }

        using var snapshot = temp.Store.CreateSnapshot();
        var ranged = new List<DocumentBody>();
        snapshot.ReadRange("c/0", "c/5", ranged, buffer: Buffer);
        var many = new List<DocumentBody>();
        snapshot.MultiGet(["c/1", "c/4"], many, Buffer);

        Assert.Equal(8, lent.Count);
        foreach (var (body, array) in ranged.Concat(many).Zip(lent))
        {
            Assert.Equal(written[body.Id], body.Body.ToArray());
            Assert.True(MemoryMarshal.TryGetArray(body.Body, out var segment));
            Assert.Same(array, segment.Array);
            Assert.Equal(0, segment.Offset);
        }

        Assert.Equal(["c/0", "c/1", "c/2", "c/3", "c/4", "c/5"], ranged.Select(body => body.Id));
        Assert.Equal(["c/1", "c/4"], many.Select(body => body.Id));
    }

    [Fact]
    public void MultiGetAndReadRange_ABufferShorterThanTheBody_ThrowNamingBothLengths_MultiGetAppendsNothing()
    {
        using var temp = new TempStore();
        temp.Store.Put("c/1", """{"v":1}""");
        temp.Store.Put("c/2", """{"v":22}""");
        using var snapshot = temp.Store.CreateSnapshot();

        var many = new List<DocumentBody>();
        var error = Assert.Throws<InvalidOperationException>(() => snapshot.MultiGet(["c/1", "c/2"], many, length => new byte[length - 1]));
        Assert.Contains("returned 6 bytes for a body of 7 bytes", error.Message, StringComparison.Ordinal);
        Assert.Contains("at least as long as the body", error.Message, StringComparison.Ordinal);
        Assert.Empty(many);

        var ranged = Assert.Throws<InvalidOperationException>(() => snapshot.ReadRange("c/1", "c/2", [], buffer: _ => null!));
        Assert.Contains("returned null for a body of 7 bytes", ranged.Message, StringComparison.Ordinal);

        // The snapshot still reads after the refusals.
        snapshot.MultiGet(["c/2"], many);
        Assert.Equal("""{"v":22}""", Encoding.UTF8.GetString(many.Single().Body.Span));
        snapshot.Dispose();
        temp.AssertNoOpenHandles();
    }
}
