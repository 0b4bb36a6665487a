namespace Indexing.Storage;

/// <summary>Which rule a document id or body broke.</summary>
public enum DocumentValidationRule
{
    /// <summary>The id is null or empty.</summary>
    IdEmpty,

    /// <summary>The id is longer than <see cref="DocumentIds.MaxIdBytes"/> UTF-8 bytes.</summary>
    IdTooLong,

    /// <summary>The id contains a control character (C0, DEL or C1).</summary>
    IdControlCharacter,

    /// <summary>The id contains an unpaired surrogate, so it has no UTF-8 form.</summary>
    IdInvalidUnicode,

    /// <summary>The id starts with '/', so its collection part would be empty.</summary>
    IdEmptyCollection,

    /// <summary>The UTF-8 body is larger than <see cref="StoreOptions.MaxDocumentBytes"/>.</summary>
    BodyTooLarge,

    /// <summary>The body is not valid UTF-8 (or, given as a string, not valid UTF-16).</summary>
    BodyInvalidUtf8,

    /// <summary>The body starts with a UTF-8 byte order mark.</summary>
    BodyByteOrderMark,

    /// <summary>The body is not one well-formed JSON value.</summary>
    BodyMalformedJson,

    /// <summary>The body is well-formed JSON, but its root is not an object.</summary>
    BodyNotObject,
}

/// <summary>One broken rule, as bulk paths report it per input line instead of throwing.</summary>
/// <param name="Id">The document id as given; null when the id itself was missing.</param>
/// <param name="Rule">The rule that was broken.</param>
/// <param name="Message">What was wrong, with the value, the rule and what to do.</param>
public sealed record DocumentValidationError(string? Id, DocumentValidationRule Rule, string Message);

/// <summary>Thrown when a document id or body breaks a rule; nothing has been written.</summary>
public sealed class DocumentValidationException : IndexingException
{
    /// <summary>Wraps <paramref name="error"/>; the exception message is the error's message.</summary>
    internal DocumentValidationException(DocumentValidationError error)
        : base(IndexingErrorKind.InvalidDocument, (error ?? throw new ArgumentNullException(nameof(error))).Message)
    {
        Error = error;
    }

    /// <summary>The broken rule with its id and message.</summary>
    public DocumentValidationError Error { get; }

    /// <summary>The document id as given; null when the id itself was missing.</summary>
    public string? DocumentId => Error.Id;

    /// <summary>The rule that was broken.</summary>
    public DocumentValidationRule Rule => Error.Rule;
}
