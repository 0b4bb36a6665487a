namespace Indexing.Prefetcher.Tests;

public sealed class BodyBuffersTests
{
    [Theory]
    [InlineData(BodyBuffers.MinPooledBytes, BodyBuffers.MinPooledBytes)]
    [InlineData(BodyBuffers.MinPooledBytes + 1, 2 * BodyBuffers.MinPooledBytes)]
    [InlineData(40_000, 65_536)]
    [InlineData(BodyBuffers.MaxPooledBytes, BodyBuffers.MaxPooledBytes)]
    public void Rent_APooledLength_IsRoundedUpToItsBucket_AndComesBackAfterReturn(int length, int arrayLength)
    {
        var buffers = new BodyBuffers(budgetBytes: 1 << 20);

        var array = buffers.Rent(length);
        Assert.Equal(arrayLength, array.Length);
        buffers.Return(array.AsMemory(0, length));

        Assert.Same(array, buffers.Rent(length));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(BodyBuffers.MinPooledBytes - 1)]
    [InlineData(BodyBuffers.MaxPooledBytes + 1)]
    public void Rent_OutsideThePooledLengths_IsANewArrayOfTheLength_ThatReturnDoesNotKeep(int length)
    {
        var buffers = new BodyBuffers(budgetBytes: 1 << 20);

        var array = buffers.Rent(length);
        Assert.Equal(length, array.Length);
        buffers.Return(array);

        Assert.NotSame(array, buffers.Rent(length));
    }

    [Fact]
    public void New_ABudgetOfZero_Throws()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new BodyBuffers(0));
    }
}
