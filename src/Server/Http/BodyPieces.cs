using System.IO.Pipelines;
using Microsoft.AspNetCore.Http;

namespace Indexing.Server.Http;

/// <summary>
/// Writes a stored body to an answer in pieces, each flushed before the next is copied: Kestrel's
/// output pipe then holds one piece at a time (64 KiB at most in its buffer), where one write of a
/// whole body would copy all of it (up to the document limit) into Kestrel's memory pool before the
/// flush waits on a slow client. The flush waits while the client reads slower than the store, and
/// Kestrel's minimum response data rate (<c>Server:MinResponseBytesPerSecond</c>) ends a client that
/// stalls, which releases the body.
/// </summary>
internal static class BodyPieces
{
    /// <summary>The size of one piece: small next to Kestrel's 64 KiB output buffer, large enough that a flush per piece costs nothing.</summary>
    public const int PieceBytes = 16 << 10;

    public static async ValueTask WriteAsync(PipeWriter writer, ReadOnlyMemory<byte> body, CancellationToken cancellationToken)
    {
        for (var offset = 0; offset < body.Length; offset += PieceBytes)
        {
            var piece = body.Slice(offset, Math.Min(PieceBytes, body.Length - offset));
            piece.Span.CopyTo(writer.GetSpan(piece.Length));
            writer.Advance(piece.Length);
            var flushed = await writer.FlushAsync(cancellationToken).ConfigureAwait(false);
            if (flushed.IsCanceled || flushed.IsCompleted)
            {
                // The client left (or Kestrel cut it off): nothing more can be sent.
                return;
            }
        }
    }
}

/// <summary>
/// <c>GET /docs/{id}</c>'s 200: the stored body as <c>application/json</c> with its length, written in
/// <see cref="BodyPieces"/>. The ETag header is set by the endpoint.
/// </summary>
internal sealed class DocumentBodyResult(byte[] body) : IResult
{
    public Task ExecuteAsync(HttpContext httpContext)
    {
        var response = httpContext.Response;
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = "application/json";
        response.ContentLength = body.Length;
        return BodyPieces.WriteAsync(response.BodyWriter, body, httpContext.RequestAborted).AsTask();
    }
}
