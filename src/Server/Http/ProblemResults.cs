using Indexing.Server.Hosting;
using Indexing.Storage;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.HttpResults;

namespace Indexing.Server.Http;

/// <summary>
/// RFC 7807 problem details for every refusal, so clients get one shape: a short title per kind of
/// problem, the detail saying what was wrong with which value and what to do, and for document
/// rules the rule's name (<c>rule</c>), which clients can branch on without parsing text.
/// </summary>
internal static class ProblemResults
{
    public static ProblemHttpResult BadRequest(string title, string detail, string? rule = null) =>
        Problem(StatusCodes.Status400BadRequest, title, detail, rule);

    public static ProblemHttpResult NotFound(string title, string detail) =>
        Problem(StatusCodes.Status404NotFound, title, detail);

    public static ProblemHttpResult Conflict(string title, string detail) =>
        Problem(StatusCodes.Status409Conflict, title, detail);

    public static ProblemHttpResult Unavailable(string title, string detail) =>
        Problem(StatusCodes.Status503ServiceUnavailable, title, detail);

    public static ProblemHttpResult TooLarge(string detail) =>
        Problem(StatusCodes.Status413PayloadTooLarge, "Request body too large", detail, nameof(DocumentValidationRule.BodyTooLarge));

    public static ProblemHttpResult Unauthorized(string detail) =>
        Problem(StatusCodes.Status401Unauthorized, "API key required", detail);

    public static ProblemHttpResult Forbidden(string title, string detail) =>
        Problem(StatusCodes.Status403Forbidden, title, detail);

    public static ProblemHttpResult UnsupportedMediaType(string detail) =>
        Problem(StatusCodes.Status415UnsupportedMediaType, "Unsupported content type", detail);

    /// <summary>
    /// 507: the store's volume is full, so the store refuses every write (reads and queries go on) until
    /// space returns and it resumes by itself. The detail is the store's own message with the data
    /// directory shown as <c>&lt;data&gt;</c>.
    /// </summary>
    public static ProblemHttpResult StoreFull(IndexingException full, FailureTexts failures) =>
        Problem(StatusCodes.Status507InsufficientStorage, "Store volume full", failures.Scrub(full.Message)!);

    public static ProblemHttpResult TooManyRequests(string title, string detail) =>
        Problem(StatusCodes.Status429TooManyRequests, title, detail);

    /// <summary>A broken id or body rule: 413 for size, 400 for everything else.</summary>
    public static ProblemHttpResult Invalid(DocumentValidationError error) =>
        error.Rule == DocumentValidationRule.BodyTooLarge
            ? TooLarge(error.Message)
            : BadRequest(IsIdRule(error.Rule) ? "Invalid document id" : "Invalid document body", error.Message, error.Rule.ToString());

    private static bool IsIdRule(DocumentValidationRule rule) => rule is DocumentValidationRule.IdEmpty or DocumentValidationRule.IdTooLong
        or DocumentValidationRule.IdControlCharacter or DocumentValidationRule.IdInvalidUnicode or DocumentValidationRule.IdEmptyCollection;

    private static ProblemHttpResult Problem(int status, string title, string detail, string? rule = null) =>
        TypedResults.Problem(
            detail: detail,
            statusCode: status,
            title: title,
            extensions: rule is null ? null : new Dictionary<string, object?> { ["rule"] = rule });
}
