using Indexing.Storage;

namespace Indexing.Server.Hosting;

/// <summary>
/// Storage's messages name its settings by <see cref="StoreOptions"/>' own names
/// (<c>StoreOptions.MaxDocumentBytes</c>); the server's users know them as configuration keys
/// (<c>Storage:MaxDocumentBytes</c>). Every Storage message the server shows goes through here.
/// </summary>
internal static class StorageSettingNames
{
    // TombstonePurgeInterval is no server setting: the server leaves it at its default.
    private static readonly (string Storage, string Server)[] _names =
    [
        (StoreOptions.MaxDocumentBytesName, ServerOptions.MaxDocumentBytesSetting),
        (StoreOptions.BlockCacheBytesName, ServerOptions.BlockCacheBytesSetting),
        (StoreOptions.RowCacheBytesName, ServerOptions.RowCacheBytesSetting),
        (StoreOptions.NativeLibraryName, ServerOptions.NativeLibrarySetting),
    ];

    /// <summary>The message with Storage's setting names replaced by the server's.</summary>
    public static string Map(string message)
    {
        foreach (var (storage, server) in _names)
        {
            message = message.Replace(storage, server, StringComparison.Ordinal);
        }

        return message;
    }

    /// <summary>Like <see cref="Map(string)"/>, where the document size limit goes by <paramref name="maxDocumentBytesSetting"/> (e.g. the measure command's option).</summary>
    public static string Map(string message, string maxDocumentBytesSetting) =>
        Map(message.Replace(StoreOptions.MaxDocumentBytesName, maxDocumentBytesSetting, StringComparison.Ordinal));
}
