using System.Text.Json;
using System.Text.Json.Serialization;

namespace Indexing.Server.Http;

/// <summary>
/// A stored document body written into a response as JSON, byte for byte: the store validated it as
/// strict JSON when it was written, so re-parsing and re-serialising it would only cost time.
/// </summary>
[JsonConverter(typeof(RawJsonConverter))]
internal sealed record RawJson(byte[] Utf8Json);

internal sealed class RawJsonConverter : JsonConverter<RawJson>
{
    public override RawJson Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) =>
        throw new NotSupportedException("RawJson is only written, in responses.");

    public override void Write(Utf8JsonWriter writer, RawJson value, JsonSerializerOptions options) =>
        writer.WriteRawValue(value.Utf8Json, skipInputValidation: true);
}
