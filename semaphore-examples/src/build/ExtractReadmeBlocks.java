import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Copies the README's code blocks that are marked {@code <!-- compiled as PACKAGE/FILE -->} into the build's
 * generated sources (run by semaphore-examples' pom, before compiling, as a single-file Java program), so that the
 * README's code is compiled exactly as it is shown, with one line added: {@code package PACKAGE}. A marked block
 * that is missing or empty fails the build.
 *
 * <p>Arguments: the README, the directory for the Kotlin files, the directory for the Java files, then the files
 * expected, as PACKAGE/FILE (so that a marker removed from the README fails the build too).
 */
public class ExtractReadmeBlocks {
    private static final Pattern BLOCK = Pattern.compile(
            "<!-- compiled as ([a-z][a-z0-9]*(?:\\.[a-z][a-z0-9]*)*)/([A-Za-z][A-Za-z0-9]*\\.(kt|java)) -->\\n```(kotlin|java)\\n(.*?)\\n```",
            Pattern.DOTALL);

    public static void main(String[] args) throws IOException {
        if (args.length < 4) {
            throw new IllegalArgumentException("usage: README KOTLIN_DIR JAVA_DIR PACKAGE/FILE..., got " + List.of(args));
        }
        String readme = Files.readString(Path.of(args[0]));
        Path kotlinDir = Path.of(args[1]);
        Path javaDir = Path.of(args[2]);
        List<String> expected = List.of(args).subList(3, args.length);
        Matcher m = BLOCK.matcher(readme);
        int found = 0;
        while (m.find()) {
            String pkg = m.group(1);
            String file = m.group(2);
            String language = m.group(4);
            String code = m.group(5);
            if (!(file.endsWith(".kt") ? "kotlin" : "java").equals(language)) {
                throw new IllegalStateException(file + " is marked on a ```" + language + " block");
            }
            if (!expected.contains(pkg + "/" + file)) {
                throw new IllegalStateException(args[0] + " marks " + pkg + "/" + file + ", which the build does not expect: "
                        + expected);
            }
            if (code.isBlank()) throw new IllegalStateException(pkg + "/" + file + " is empty in " + args[0]);
            Path dir = (language.equals("kotlin") ? kotlinDir : javaDir).resolve(pkg.replace('.', '/'));
            Files.createDirectories(dir);
            String source = "package " + pkg + (language.equals("java") ? ";" : "") + "\n\n" + code + "\n";
            Path target = dir.resolve(file);
            // Written only when changed, so that an unchanged README recompiles nothing.
            if (!Files.exists(target) || !Files.readString(target).equals(source)) Files.writeString(target, source);
            found++;
        }
        if (found != expected.size()) {
            throw new IllegalStateException(args[0] + " has " + found + " marked blocks, the build expects " + expected.size()
                    + ": " + expected);
        }
    }
}
