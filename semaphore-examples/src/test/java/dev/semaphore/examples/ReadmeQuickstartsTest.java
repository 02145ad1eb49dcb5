package dev.semaphore.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.redis.LocalRedisServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The README's code blocks, run. The build compiles them as the README shows them (ExtractReadmeBlocks copies each
 * block marked {@code <!-- compiled as PACKAGE/FILE -->} into the generated sources, adding only the package line),
 * so these tests run the README's own text: each checks what its block prints.
 */
class ReadmeQuickstartsTest {

    @Test
    void theKotlinQuickstartRunsAndPrintsWhatItDid() throws Exception {
        List<String> lines = printedBy("readme.kotlin.QuickstartKt");
        assertEquals(List.of(
                "2 permits held, 2 free",
                "a permit within 2 s",
                "served at priority 10",
                "20 pages, balance 70, home: <html>https://example.com/page/0</html>"), lines);
    }

    @Test
    void theJavaQuickstartRunsAndPrintsThePage() throws Exception {
        List<String> lines = printedBy("readme.java.Quickstart");
        assertEquals(List.of("fetched: <html>https://example.com</html>"), lines);
    }

    @Test
    @Timeout(60)
    void theDistributedQuickstartRunsOnARealRedisServer() throws Exception {
        try (LocalRedisServer server = LocalRedisServer.Companion.start(false, false)) {
            List<String> lines = printedBy("readme.distributed.QuickstartKt", server.getUri());
            assertEquals(1, lines.size(), "printed: " + lines);
            Matcher m = Pattern.compile("101 reports run; the last one's fencing token: (\\d+)").matcher(lines.get(0));
            assertTrue(m.matches(), "printed: " + lines);
            // 100 grants before it, each with a higher token than the one before (the first is 1 on a fresh server).
            assertTrue(Long.parseLong(m.group(1)) >= 101, "token " + m.group(1));
        }
    }

    @Test
    void theDumpInTheReadmeIsWhatItsBlockPrints() throws Exception {
        String printed = String.join("\n", printedBy("readme.dump.SeeingWhatWaitsKt"));
        String readme = Files.readString(Path.of("../README.md"));
        Matcher block = Pattern.compile("<!-- output of readme.dump/SeeingWhatWaits.kt -->\\n```\\n(.*?)\\n```", Pattern.DOTALL)
                .matcher(readme);
        assertTrue(block.find(), "README.md has no output block for readme.dump/SeeingWhatWaits.kt");
        assertEquals(withoutTimes(block.group(1)), withoutTimes(printed));
    }

    /** Durations in milliseconds vary from run to run: each becomes "Nms". */
    private static String withoutTimes(String dump) {
        return dump.replaceAll("\\b\\d+ms\\b", "Nms");
    }

    /**
     * The lines that a class's main method prints to System.out, called as the {@code java} launcher calls it (by
     * reflection: a Kotlin {@code fun main()} has a {@code main(String[])} that only the launcher sees).
     */
    private static List<String> printedBy(String mainClass, String... args) throws Exception {
        PrintStream out = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            Class.forName(mainClass).getMethod("main", String[].class).invoke(null, (Object) args);
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        } finally {
            System.setOut(out);
        }
        return bytes.toString(StandardCharsets.UTF_8).lines().toList();
    }
}
