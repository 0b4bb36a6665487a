using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;
using Indexing.Datasets;

namespace Indexing.Server.Loading;

/// <summary>Writes documents in the bulk format: one line per document, <c>{"id":"…","doc":{…}}</c>.</summary>
/// <remarks>
/// <para>
/// This is the format <see cref="BulkLoad"/> reads (the bulk endpoint and the measure command): UTF-8,
/// '\n' after every line, the body embedded as-is (so it must be compact JSON with no line
/// breaks; anything else would split the line). The id is JSON-escaped as needed.
/// </para>
/// <para>
/// Streaming: each document goes to the stream when written, nothing is held back but one reused
/// line buffer. Small documents go out in one write with their line framing; large ones are written
/// straight from the caller's array. Use the async methods on streams that forbid synchronous I/O
/// (ASP.NET Core request and response bodies). Not thread-safe.
/// </para>
/// </remarks>
internal sealed class NdjsonBulkWriter : IDisposable, IAsyncDisposable
{
    // Bodies up to this size are copied into the line buffer so the line is one stream write.
    private const int CopyLimitBytes = 64 * 1024;

    private static readonly JsonEncodedText _id = JsonEncodedText.Encode("id");
    private static readonly JsonEncodedText _doc = JsonEncodedText.Encode("doc");

    // Closes the object and the line; memory rather than a u8 span so the async path can use it.
    private static readonly ReadOnlyMemory<byte> _lineEnd = "}\n"u8.ToArray();

    private readonly Stream _stream;
    private readonly bool _leaveOpen;
    private readonly ArrayBufferWriter<byte> _line = new(CopyLimitBytes + 1024);
    private readonly Utf8JsonWriter _json;
    private int _disposed;

    /// <summary>Writes to <paramref name="stream"/>, which is disposed with this writer unless <paramref name="leaveOpen"/>.</summary>
    public NdjsonBulkWriter(Stream stream, bool leaveOpen = false)
    {
        ArgumentNullException.ThrowIfNull(stream);
        if (!stream.CanWrite)
        {
            throw new ArgumentException("the bulk output stream is not writable; pass a stream opened for writing.", nameof(stream));
        }

        _stream = stream;
        _leaveOpen = leaveOpen;
        _json = new Utf8JsonWriter(_line, new JsonWriterOptions { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping });
    }

    /// <summary>Lines written so far.</summary>
    public long DocumentsWritten { get; private set; }

    /// <summary>Bytes written so far, line framing included.</summary>
    public long BytesWritten { get; private set; }

    /// <summary>Writes one line for a generated document.</summary>
    public void Write(GeneratedDocument document) => Write(document.Id, document.Utf8Json);

    /// <summary>Writes one line: the id, and the body embedded as-is.</summary>
    /// <exception cref="ArgumentException">The body is empty or contains a line break.</exception>
    public void Write(string id, ReadOnlySpan<byte> utf8Json)
    {
        var inline = BeginLine(id, utf8Json);
        _stream.Write(_line.WrittenSpan);
        if (!inline)
        {
            _stream.Write(utf8Json);
            _stream.Write(_lineEnd.Span);
        }

        EndLine(inline, utf8Json.Length);
    }

    /// <summary>Writes one line for a generated document, asynchronously.</summary>
    public ValueTask WriteAsync(GeneratedDocument document, CancellationToken cancellationToken = default) =>
        WriteAsync(document.Id, document.Utf8Json, cancellationToken);

    /// <summary>Writes one line asynchronously: the id, and the body embedded as-is.</summary>
    /// <exception cref="ArgumentException">The body is empty or contains a line break.</exception>
    public async ValueTask WriteAsync(string id, ReadOnlyMemory<byte> utf8Json, CancellationToken cancellationToken = default)
    {
        var inline = BeginLine(id, utf8Json.Span);
        await _stream.WriteAsync(_line.WrittenMemory, cancellationToken).ConfigureAwait(false);
        if (!inline)
        {
            await _stream.WriteAsync(utf8Json, cancellationToken).ConfigureAwait(false);
            await _stream.WriteAsync(_lineEnd, cancellationToken).ConfigureAwait(false);
        }

        EndLine(inline, utf8Json.Length);
    }

    /// <summary>Writes every document of a sequence (e.g. <see cref="DatasetGenerator.Generate"/>) as it is produced.</summary>
    public void WriteAll(IEnumerable<GeneratedDocument> documents)
    {
        ArgumentNullException.ThrowIfNull(documents);
        foreach (var document in documents)
        {
            Write(document);
        }
    }

    /// <summary>Flushes the underlying stream.</summary>
    public void Flush()
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        _stream.Flush();
    }

    /// <summary>Flushes the underlying stream asynchronously.</summary>
    public Task FlushAsync(CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        return _stream.FlushAsync(cancellationToken);
    }

    /// <summary>Disposes the stream unless it was left open. Lines are never buffered here, so nothing is lost.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _json.Dispose();
        if (!_leaveOpen)
        {
            _stream.Dispose();
        }
    }

    /// <inheritdoc cref="Dispose"/>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await _json.DisposeAsync().ConfigureAwait(false);
        if (!_leaveOpen)
        {
            await _stream.DisposeAsync().ConfigureAwait(false);
        }
    }

    // Puts {"id":"…","doc": in the line buffer, and when the body is small the body and line end
    // too; returns whether the buffer now holds the whole line.
    private bool BeginLine(string id, ReadOnlySpan<byte> utf8Json)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        ArgumentNullException.ThrowIfNull(id);
        if (utf8Json.IsEmpty)
        {
            throw new ArgumentException($"document {MessageText.Quote(id)} has an empty body; a bulk line needs a JSON object body.", nameof(utf8Json));
        }

        var lineBreak = utf8Json.IndexOfAny((byte)'\n', (byte)'\r');
        if (lineBreak >= 0)
        {
            throw new ArgumentException(
                $"document {MessageText.Quote(id)} body has a line break at byte {lineBreak}, which would split its bulk line; " +
                "write bodies as compact JSON (no indentation), e.g. re-serialize it with Indented = false.",
                nameof(utf8Json));
        }

        _line.ResetWrittenCount();
        _json.Reset();
        _json.WriteStartObject();
        _json.WriteString(_id, id);
        _json.WritePropertyName(_doc);
        _json.Flush();
        if (utf8Json.Length > CopyLimitBytes)
        {
            return false;
        }

        _line.Write(utf8Json);
        _line.Write(_lineEnd.Span);
        return true;
    }

    private void EndLine(bool inline, int bodyBytes)
    {
        // An inline line is all in the buffer; otherwise the body and line end went separately.
        BytesWritten += inline ? _line.WrittenCount : _line.WrittenCount + bodyBytes + _lineEnd.Length;
        DocumentsWritten++;
    }
}
