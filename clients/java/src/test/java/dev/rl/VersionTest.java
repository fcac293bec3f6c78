package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The jar is released with rl: its version is Cargo.toml's. */
class VersionTest {

    @Test
    void pom_version_is_cargo_version() throws IOException {
        Path root = RealServer.requiredDir("rl.root", "the repository root (clients/java/tests/run sets it)");
        String cargo = first(Files.readString(root.resolve("Cargo.toml")), "(?m)^version\\s*=\\s*\"([^\"]+)\"");
        String pom = first(Files.readString(root.resolve("clients/java/pom.xml")),
                "<artifactId>rl</artifactId>\\s*(?:<!--.*?-->\\s*)?<version>([^<]+)</version>");
        assertEquals(cargo, pom, "clients/java/pom.xml's version against Cargo.toml's");
        // The "rl is not loaded" message names the release's rl-<version>.lua with it.
        assertEquals(cargo, RlCommands.VERSION, "RlCommands.VERSION against Cargo.toml's");
    }

    private static String first(String text, String regex) {
        Matcher m = Pattern.compile(regex, Pattern.DOTALL).matcher(text);
        if (!m.find()) {
            throw new IllegalStateException("no match for " + regex);
        }
        return m.group(1);
    }
}
