using Microsoft.AspNetCore.Http.Metadata;

namespace Indexing.Server.Http;

/// <summary>
/// An endpoint's own request body limit, as endpoint metadata: routing applies it to Kestrel's
/// <c>IHttpMaxRequestBodySizeFeature</c> before the handler runs (null: no limit). Endpoints without
/// one get the server-wide default for small JSON bodies (<c>ServerHost.SmallBodyBytes</c>).
/// </summary>
internal sealed record BodySizeLimit(long? MaxRequestBodySize) : IRequestSizeLimitMetadata;
