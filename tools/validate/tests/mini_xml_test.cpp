#include <doctest/doctest.h>

#include "mini_xml.h"

using mgpu::validate::decode_entities;
using mgpu::validate::read_xml;

TEST_CASE("mini_xml reads elements, attributes, text and self-closing elements") {
    const auto document = read_xml(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<root kind='outer' count=\"2\">\n"
        "  <leaf name=\"a\"/>\n"
        "  <!-- a comment <not an element> -->\n"
        "  <leaf name=\"b\">inner text</leaf>\n"
        "</root>\n");
    CHECK(document.complete);
    REQUIRE(document.root.children.size() == 1);
    const auto& root = document.root.children[0];
    CHECK(root.name == "root");
    CHECK(root.attribute("kind") == std::optional<std::string>("outer"));
    CHECK(root.attribute_or("count", "") == "2");
    CHECK_FALSE(root.attribute("missing").has_value());
    REQUIRE(root.children.size() == 2);
    CHECK(root.children[0].attribute_or("name", "") == "a");
    CHECK(root.children[0].children.empty());
    CHECK(root.children[1].text == "inner text");
    CHECK(root.first_child("leaf") == &root.children[0]);
    CHECK(root.first_child("none") == nullptr);
}

TEST_CASE("mini_xml decodes the named and numeric entities in text and attributes") {
    CHECK(decode_entities("a &lt; b &amp;&amp; c &gt; d") == "a < b && c > d");
    CHECK(decode_entities("&quot;x&quot; &apos;y&apos;") == "\"x\" 'y'");
    CHECK(decode_entities("&#65;&#x42;&#x3bb;") == "AB\xce\xbb");   // U+03BB in UTF-8 is CE BB
    CHECK(decode_entities("&unknown; & alone") == "&unknown; & alone");
    const auto document = read_xml("<e name=\"x &lt;= 1 &amp;&amp; &quot;y&quot;\">1 &lt; 2</e>");
    CHECK(document.root.children.at(0).attribute_or("name", "") == "x <= 1 && \"y\"");
    CHECK(document.root.children.at(0).text == "1 < 2");
}

TEST_CASE("mini_xml keeps what it read from a text that stops in the middle") {
    const auto document = read_xml("<outer><inner a=\"1\">done</inner><inner a=\"2\">cut");
    CHECK_FALSE(document.complete);
    CHECK_FALSE(document.problem.empty());
    REQUIRE(document.root.children.size() == 1);
    const auto& outer = document.root.children[0];
    REQUIRE(outer.children.size() == 2);
    CHECK(outer.children[0].text == "done");
    CHECK(outer.children[1].attribute_or("a", "") == "2");
    CHECK(outer.children[1].text == "cut");
}

TEST_CASE("mini_xml notices a tag cut short and a closing tag that closes nothing") {
    CHECK_FALSE(read_xml("<outer><inner a=\"1").complete);
    CHECK_FALSE(read_xml("<outer></other>").complete);
    CHECK(read_xml("<outer><inner/></outer>").complete);
}

TEST_CASE("mini_xml reads CDATA sections as text") {
    const auto document = read_xml("<e><![CDATA[a <b> & c]]></e>");
    CHECK(document.complete);
    CHECK(document.root.children.at(0).text == "a <b> & c");
}
