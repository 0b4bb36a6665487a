using System.Globalization;
using Spectre.Console;

namespace Indexing.Server.Tests;

// A Spectre console writing plain text (no colours, no live widgets) into a string, wide enough
// that the commands' tables are not folded, for tests to assert on what a user would read.
internal sealed class RecordingConsole
{
    private readonly StringWriter _output = new(CultureInfo.InvariantCulture);

    public RecordingConsole()
    {
        Console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Ansi = AnsiSupport.No,
            ColorSystem = ColorSystemSupport.NoColors,
            Interactive = InteractionSupport.No,
            Out = new AnsiConsoleOutput(_output),
        });
        Console.Profile.Width = 240;
    }

    public IAnsiConsole Console { get; }

    public string Output => _output.ToString();
}
