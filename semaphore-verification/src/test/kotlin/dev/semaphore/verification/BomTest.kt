/*
 * semaphore-bom lists exactly the published modules, at the build's version.
 *
 * A module of the root POM is published unless its POM sets `maven.deploy.skip` to true (semaphore-verification,
 * semaphore-benchmarks and semaphore-examples do); the BOM itself and the parent are POMs, not libraries.
 * The BOM must list every published module, with the build's group and `${project.version}`, and nothing else:
 * an entry for a module that does not exist (a typo, a module renamed or removed) would only fail in a user's
 * build, since Maven resolves a managed dependency only when somebody uses it.
 *
 * The BOM has no parent (an import would otherwise hand a user semaphore-parent's own test and build
 * dependencies), so its version and its release metadata are written twice; they must agree with the parent's.
 *
 * (Every module of this build already resolves the library's modules through the BOM: semaphore-parent imports
 * it, so a published module missing from it fails the build where a module uses it without a version.
 * This test covers what that cannot: an entry too many, a module nobody in the build depends on, and the
 * metadata.)
 */
package dev.semaphore.verification

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.w3c.dom.Element
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.Paths
import javax.xml.parsers.DocumentBuilderFactory

class BomTest {

    @Test
    fun `the BOM lists every published module and nothing else`() {
        val listed = bom.managed().map { it.text("artifactId") }
        assertEquals(listed.distinct(), listed, "an entry twice in semaphore-bom/pom.xml")
        assertEquals(
            publishedModules().sorted(), listed.sorted(),
            "semaphore-bom/pom.xml must list exactly the published modules of the root pom.xml " +
                "(those whose POM does not set maven.deploy.skip)",
        )
    }

    @Test
    fun `each entry is of the build's group, at the build's version`() {
        for (entry in bom.managed()) {
            val name = entry.text("artifactId")
            assertEquals(parent.text("groupId"), entry.text("groupId"), "groupId of $name")
            assertEquals("\${project.version}", entry.text("version"), "version of $name")
            assertEquals(null, entry.textOrNull("scope"), "scope of $name")
            assertEquals(null, entry.textOrNull("type"), "type of $name (every published module is a jar)")
        }
    }

    @Test
    fun `the BOM has the parent's coordinates and release metadata`() {
        assertEquals(parent.text("groupId"), bom.text("groupId"))
        assertEquals(parent.text("version"), bom.text("version"), "semaphore-bom's version (it has no parent)")
        assertEquals("pom", bom.text("packaging"))
        assertTrue(bom.textOrNull("description").orEmpty().isNotBlank(), "semaphore-bom needs a description")
        for (tag in listOf("url", "inceptionYear", "licenses", "developers", "scm")) {
            assertEquals(parent.child(tag)?.flat(), bom.child(tag)?.flat(), "<$tag> of semaphore-bom/pom.xml and pom.xml")
            assertTrue(bom.child(tag) != null, "semaphore-bom/pom.xml has no <$tag>")
        }
    }

    @Test
    fun `the parent imports the BOM`() {
        val import = parent.child("dependencyManagement")!!.child("dependencies")!!.children("dependency")
            .single { it.text("artifactId") == "semaphore-bom" }
        assertEquals("import", import.text("scope"))
        assertEquals("pom", import.text("type"))
        assertEquals("\${project.version}", import.text("version"))
        val ownModules = parent.child("dependencyManagement")!!.child("dependencies")!!.children("dependency")
            .filter { it.text("groupId") == parent.text("groupId") && it.text("artifactId") != "semaphore-bom" }
        assertEquals(emptyList<String>(), ownModules.map { it.text("artifactId") },
            "pom.xml manages a module of the library itself: it would hide a BOM without it")
    }

    private companion object {
        val rootDir: Path by lazy {
            val root = System.getProperty("semaphore.rootDir")
                ?: error("system property semaphore.rootDir is not set (run the test through Maven)")
            Paths.get(root).toAbsolutePath().normalize()
        }

        val parent: Element by lazy { read(rootDir.resolve("pom.xml")) }
        val bom: Element by lazy { read(rootDir.resolve("semaphore-bom").resolve("pom.xml")) }

        fun read(pom: Path): Element {
            assertTrue(Files.isRegularFile(pom), "$pom is missing")
            return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile()).documentElement
        }

        /** The root POM's modules whose POM does not set maven.deploy.skip, other than the POM-packaged ones. */
        fun publishedModules(): List<String> =
            parent.child("modules")!!.children("module").map { it.textContent.trim() }.filter { dir ->
                val pom = read(rootDir.resolve(dir).resolve("pom.xml"))
                val packaging = pom.textOrNull("packaging") ?: "jar"
                val skipped = pom.child("properties")?.textOrNull("maven.deploy.skip") == "true"
                packaging != "pom" && !skipped
            }.map { dir -> read(rootDir.resolve(dir).resolve("pom.xml")).text("artifactId") }

        fun Element.managed(): List<Element> =
            child("dependencyManagement")?.child("dependencies")?.children("dependency").orEmpty()

        fun Element.children(tag: String): List<Element> =
            (0 until childNodes.length).map { childNodes.item(it) }.filterIsInstance<Element>().filter { it.tagName == tag }

        fun Element.child(tag: String): Element? = children(tag).singleOrNull()
        fun Element.textOrNull(tag: String): String? = child(tag)?.textContent?.trim()
        fun Element.text(tag: String): String = textOrNull(tag) ?: error("<$tagName> has no <$tag>")

        /** The element's text and that of its descendants, comments and layout left out: what Maven reads. */
        fun Element.flat(): String =
            (0 until childNodes.length).map { childNodes.item(it) }.joinToString("|") { node ->
                when (node) {
                    is Element -> "${node.tagName}=${node.flat()}"
                    is org.w3c.dom.Text -> node.data.trim()
                    else -> ""
                }
            }.replace(Regex("\\|+"), "|").trim('|')
    }
}
