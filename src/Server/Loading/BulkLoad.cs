using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.IO.Pipelines;
using System.Text.Json;
using Indexing.Engine;
using Indexing.Storage;

namespace Indexing.Server.Loading;

/// <summary>
/// Loads NDJSON lines <c>{"id": "...", "doc": {...}}</c> into the engine or a store, streamed: the body of
/// <c>POST /docs/bulk</c> (through the engine's public API) and the file the <c>measure</c> command reads
/// into a scratch store of its own (<c>BulkLoad.Store.cs</c>). Memory stays bounded
/// whatever the input size: the pipe holds at most one line (capped at the document limit plus room
/// for the envelope), and good documents are written in chunks of about 8 MiB. Each line is judged
/// alone: a bad line is reported with its line number and rule, and never stops or undoes the good
/// ones. Chunks already written stay written if the input stops mid-stream.
/// </summary>
internal static partial class BulkLoad
{
    // Room for the envelope around a maximal body: the id (up to 512 UTF-8 bytes, each up to 6
    // when escaped as \uXXXX), property names, whitespace.
    private const int EnvelopeSlackBytes = 64 << 10;

    // A report of a million bad lines would itself be unbounded memory; the counts stay exact.
    private const int MaxListedErrors = 1000;

    // The store's own PutMany batch (8 MiB or 4,096 documents), so each gathered chunk is one synced
    // write batch; a different size would only change how many batches a load takes. BulkLoadTests
    // holds these restated rules to the store's.
    public const long ChunkBytes = 8L << 20;
    public const int ChunkDocuments = 4096;

    // The store's nesting limit for a body (deeper breaks its strict JSON rule); the envelope is one level more.
    public const int BodyMaxDepth = 64;

    private static readonly JsonReaderOptions _envelopeReader = new()
    {
        CommentHandling = JsonCommentHandling.Disallow,
        AllowTrailingCommas = false,
        MaxDepth = BodyMaxDepth + 1,
    };

    /// <summary>Reads <paramref name="reader"/> to its end, storing every good line through <paramref name="engine"/>.</summary>
    /// <param name="limitSetting">How the user raises the document size limit, named in the message for a line too long.</param>
    /// <param name="progress">Updated as lines are read, for a progress display on another thread; optional.</param>
    public static Task<BulkResult> LoadAsync(
        PipeReader reader, IndexingEngine engine, string limitSetting, BulkLoadProgress? progress, CancellationToken cancellationToken) =>
        LoadAsync(reader, new EngineTarget(engine), limitSetting, progress, cancellationToken);

    /// <summary>Reads <paramref name="reader"/> to its end, storing every good line in <paramref name="target"/> (a cluster's owners, say).</summary>
    public static async Task<BulkResult> LoadAsync(
        PipeReader reader, IBulkTarget target, string limitSetting, BulkLoadProgress? progress, CancellationToken cancellationToken)
    {
        var load = new Load(target, limitSetting, progress ?? new BulkLoadProgress());
        var discarding = false;
        var start = true;
        while (true)
        {
            var result = await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
            var buffer = result.Buffer;
            if (start && (buffer.Length >= 3 || result.IsCompleted))
            {
                // A UTF-8 byte order mark (Windows editors write one) belongs to the file, not to its first line.
                start = false;
                if (buffer.Length >= 3 && buffer.Slice(0, 3).ToArray().AsSpan().SequenceEqual("\uFEFF"u8))
                {
                    load.Consumed(3);
                    buffer = buffer.Slice(3);
                }
            }
            else if (start)
            {
                reader.AdvanceTo(buffer.Start, buffer.End);
                continue;
            }

            while (buffer.PositionOf((byte)'\n') is { } newline)
            {
                var line = buffer.Slice(0, newline);
                buffer = buffer.Slice(buffer.GetPosition(1, newline));
                load.Consumed(line.Length + 1);
                if (discarding)
                {
                    // The tail of a line already reported as too long.
                    discarding = false;
                }
                else if (line.Length > load.MaxLineBytes)
                {
                    // Arrived whole in one read; judged by the same rule as a line still arriving.
                    load.TooLong();
                }
                else
                {
                    load.Line(line, cancellationToken);
                }
            }

            if (!discarding && buffer.Length > load.MaxLineBytes)
            {
                load.TooLong();
                discarding = true;
            }

            if (discarding)
            {
                load.Consumed(buffer.Length);
                buffer = buffer.Slice(buffer.End);
            }

            if (result.IsCompleted)
            {
                if (!discarding && buffer.Length > 0)
                {
                    load.Consumed(buffer.Length);
                    load.Line(buffer, cancellationToken);
                    buffer = buffer.Slice(buffer.End);
                }

                reader.AdvanceTo(buffer.End);
                break;
            }

            reader.AdvanceTo(buffer.Start, buffer.End);
        }

        return load.Finish(cancellationToken);
    }

    /// <summary>One load's state: line numbers, the pending chunk, counts and listed errors.</summary>
    private sealed class Load(IBulkTarget target, string limitSetting, BulkLoadProgress progress)
    {
        private readonly List<DocumentWrite> _chunk = [];
        private readonly List<BulkLineError> _errors = [];
        private long _chunkBytes;
        private long _lines;
        private long _stored;
        private long _failed;
        private long _bytes;
        private long? _firstEtag;
        private long? _lastEtag;

        public long MaxLineBytes { get; } = target.MaxDocumentBytes + EnvelopeSlackBytes;

        public void Consumed(long bytes) => progress.AddBytes(bytes);

        public void TooLong()
        {
            _lines++;
            Fail(null, "LineTooLong",
                $"line {_lines} is longer than {ByteSize.FormatExact(MaxLineBytes)} ({limitSetting} plus " +
                $"{ByteSize.Format(EnvelopeSlackBytes)} for the envelope), so its document would be over the limit; it was skipped unread. " +
                $"Split the document or raise {limitSetting}.");
        }

        public void Line(ReadOnlySequence<byte> line, CancellationToken cancellationToken)
        {
            _lines++;
            if (line.IsSingleSegment)
            {
                Record(line.FirstSpan, cancellationToken);
            }
            else
            {
                Record(line.ToArray(), cancellationToken);
            }
        }

        public BulkResult Finish(CancellationToken cancellationToken)
        {
            Flush(cancellationToken);
            return new BulkResult(_lines, _stored, _failed, _bytes, _firstEtag, _lastEtag, _errors, _failed - _errors.Count);
        }

        private void Record(ReadOnlySpan<byte> line, CancellationToken cancellationToken)
        {
            line = line.TrimEnd((byte)'\r');
            if (line.Trim(" \t"u8).IsEmpty)
            {
                // Blank lines (a trailing newline, an empty line between records) are not records.
                return;
            }

            if (!TryReadEnvelope(line, out var id, out var doc))
            {
                return;
            }

            var body = line[doc];
            if (!target.IsValid(id, body, out var error))
            {
                // The id's rules first, then the body's; only the size rule names the limit's setting.
                Fail(id, error.Rule.ToString(), $"line {_lines}: {error.Message.Replace(StoreOptions.MaxDocumentBytesName, limitSetting, StringComparison.Ordinal)}");
                return;
            }

            _chunk.Add(new DocumentWrite(id, body.ToArray()));
            _chunkBytes += body.Length;
            // PutMany's own chunking, so each gathered chunk is one synced WriteBatch.
            if (_chunkBytes >= ChunkBytes || _chunk.Count >= ChunkDocuments)
            {
                Flush(cancellationToken);
            }
        }

        // The line must be exactly one object with a string "id" and a "doc"; the doc's own rules
        // (object root, depth, ...) are the store's, checked afterwards on its exact bytes.
        private bool TryReadEnvelope(ReadOnlySpan<byte> line, out string id, out Range doc)
        {
            id = string.Empty;
            doc = default;
            string? foundId = null;
            Range? foundDoc = null;
            var reader = new Utf8JsonReader(line, _envelopeReader);
            try
            {
                reader.Read();
                if (reader.TokenType != JsonTokenType.StartObject)
                {
                    return FailEnvelope(null, "LineNotObject",
                        $"line {_lines} is not a JSON object; each line must be {{\"id\": \"...\", \"doc\": {{...}}}}.");
                }

                while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
                {
                    var name = reader.GetString()!;
                    reader.Read();
                    if (name == "id" && reader.TokenType == JsonTokenType.String)
                    {
                        foundId = reader.GetString();
                    }
                    else if (name == "doc")
                    {
                        var start = (int)reader.TokenStartIndex;
                        reader.Skip();
                        foundDoc = start..(int)reader.BytesConsumed;
                    }
                    else
                    {
                        return FailEnvelope(foundId, name == "id" ? "LineIdNotString" : "LineUnknownProperty", name == "id"
                            ? $"line {_lines}: \"id\" is a {Describe(reader.TokenType)}, not a string; ids are strings like \"orders/17\"."
                            : $"line {_lines} has property {MessageText.Quote(name)}; a line has only \"id\" and \"doc\".");
                    }
                }

                // Reading on to the end makes the reader throw for anything after the object.
                while (reader.Read())
                {
                }
            }
            catch (InvalidOperationException)
            {
                // Strict JSON allows an escaped unpaired surrogate ("\ud800"), but it is not Unicode text,
                // so the reader refuses to decode the string (the id or a property name).
                return FailEnvelope(foundId, "LineInvalidUnicode",
                    $"line {_lines} has a string at byte {reader.TokenStartIndex + 1} that escapes an unpaired surrogate (such as \\ud800 without " +
                    "its low half), which is not Unicode text; fix the escape.");
            }
            catch (JsonException e)
            {
                return FailEnvelope(foundId, "LineMalformedJson",
                    $"line {_lines} is not well-formed JSON at byte {(e.BytePositionInLine ?? 0) + 1}: {Reason(e)}. " +
                    "Each line must be one strict JSON object {\"id\": \"...\", \"doc\": {...}} (no comments, trailing commas or NaN).");
            }

            if (foundId is null || foundDoc is null)
            {
                return FailEnvelope(foundId, foundId is null ? "LineMissingId" : "LineMissingDoc",
                    $"line {_lines} has no {(foundId is null ? "\"id\"" : "\"doc\"")}; each line must be {{\"id\": \"...\", \"doc\": {{...}}}}.");
            }

            id = foundId;
            doc = foundDoc.Value;
            return true;
        }

        private bool FailEnvelope(string? id, string rule, string message)
        {
            Fail(id, rule, message);
            return false;
        }

        private void Fail(string? id, string rule, string message)
        {
            _failed++;
            progress.Failed();
            if (_errors.Count < MaxListedErrors)
            {
                _errors.Add(new BulkLineError(_lines, id, rule, message));
            }
        }

        private void Flush(CancellationToken cancellationToken)
        {
            if (_chunk.Count == 0)
            {
                return;
            }

            // Synchronous on the request's thread: the store's writes block in RocksDB anyway, one
            // chunk (one synced batch) at a time, and the next lines wait in the pipe meanwhile.
            var written = target.PutMany(_chunk, cancellationToken);
            _stored += written.Documents;
            progress.Stored(written.Documents);
            _bytes += written.Bytes;
            _firstEtag ??= written.FirstEtag;
            _lastEtag = written.LastEtag;
            _chunk.Clear();
            _chunkBytes = 0;
        }

        private static string Describe(JsonTokenType token) => token switch
        {
            JsonTokenType.Number => "number",
            JsonTokenType.True or JsonTokenType.False => "boolean",
            JsonTokenType.Null => "null",
            JsonTokenType.StartObject => "object",
            JsonTokenType.StartArray => "array",
            _ => token.ToString(),
        };

        // The reader's message ends with its own " LineNumber: 0 | BytePositionInLine: 9." position, given above one-based.
        private static string Reason(JsonException e)
        {
            var suffix = e.Message.IndexOf(" LineNumber:", StringComparison.Ordinal);
            return (suffix < 0 ? e.Message : e.Message[..suffix]).TrimEnd('.', ' ');
        }
    }
}

/// <summary>Where a bulk load writes: the engine, or the measure command's scratch store.</summary>
internal interface IBulkTarget
{
    /// <summary>The largest document body taken, in bytes.</summary>
    long MaxDocumentBytes { get; }

    /// <summary>Whether the id and body would be taken; <paramref name="error"/> names the first rule broken.</summary>
    bool IsValid(string id, ReadOnlySpan<byte> body, [NotNullWhen(false)] out DocumentValidationError? error);

    /// <summary>Writes the documents (already valid) as one durable batch where the target syncs.</summary>
    BulkWriteResult PutMany(IReadOnlyList<DocumentWrite> documents, CancellationToken cancellationToken);
}

/// <summary>The server's target: the engine's public API.</summary>
internal sealed class EngineTarget(IndexingEngine engine) : IBulkTarget
{
    public long MaxDocumentBytes => engine.Options.Storage.MaxDocumentBytes;

    public bool IsValid(string id, ReadOnlySpan<byte> body, [NotNullWhen(false)] out DocumentValidationError? error) =>
        engine.IsValidDocument(id, body, out error);

    public BulkWriteResult PutMany(IReadOnlyList<DocumentWrite> documents, CancellationToken cancellationToken) =>
        engine.PutMany(documents, cancellationToken);
}

/// <summary>A target refused a chunk as a whole (a cluster shard sent documents it does not own): the load stops, with this status.</summary>
internal sealed class BulkTargetRefusedException(int status, string title, string message) : Exception(message)
{
    public int Status { get; } = status;

    public string Title { get; } = title;
}

/// <summary>What a bulk load did: lines seen (blank ones included), documents stored and refused, and why.</summary>
/// <param name="Lines">Lines read, blank ones included (line numbers count them).</param>
/// <param name="Stored">Documents written.</param>
/// <param name="Failed">Lines refused.</param>
/// <param name="Bytes">Body bytes written.</param>
/// <param name="FirstEtag">Etag of the first document written; null when none was.</param>
/// <param name="LastEtag">Etag of the last document written; null when none was.</param>
/// <param name="Errors">The first 1,000 refused lines, in order.</param>
/// <param name="ErrorsNotListed">Refused lines beyond those listed.</param>
internal sealed record BulkResult(
    long Lines, long Stored, long Failed, long Bytes, long? FirstEtag, long? LastEtag, IReadOnlyList<BulkLineError> Errors, long ErrorsNotListed);

/// <summary>One refused bulk line: its 1-based number, the id when it was readable, the rule and the message.</summary>
internal sealed record BulkLineError(long Line, string? Id, string Rule, string Message);

/// <summary>A load's running counts, written by the loading thread and read by a progress display.</summary>
internal sealed class BulkLoadProgress
{
    private long _bytes;
    private long _stored;
    private long _failed;

    /// <summary>Input bytes read so far (line ends included).</summary>
    public long Bytes => Interlocked.Read(ref _bytes);

    /// <summary>Documents written so far (a chunk counts once it is written).</summary>
    public long StoredDocuments => Interlocked.Read(ref _stored);

    /// <summary>Lines refused so far.</summary>
    public long FailedLines => Interlocked.Read(ref _failed);

    internal void AddBytes(long bytes) => Interlocked.Add(ref _bytes, bytes);

    internal void Stored(long documents) => Interlocked.Add(ref _stored, documents);

    internal void Failed() => Interlocked.Increment(ref _failed);
}
