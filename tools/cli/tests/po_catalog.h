// A PO file's translations, read straight from the source (po/ja.po), so that the tests compare the
// CLI's output with the catalog instead of with Japanese written into the tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

// The text of one PO string line ("..."), its escapes undone.
inline std::string po_unquoted(const std::string& line) {
    std::string text;
    const std::size_t open = line.find('"'), close = line.rfind('"');
    for (std::size_t i = open + 1; i < close; ++i) {
        if (line[i] != '\\' || i + 1 >= close) {
            text += line[i];
            continue;
        }
        const char escaped = line[++i];
        text += escaped == 'n' ? '\n' : escaped == 't' ? '\t' : escaped;
    }
    return text;
}

// msgid -> msgstr of every entry but the header; fuzzy entries are left out, as msgfmt leaves them.
inline std::map<std::string, std::string> read_po(const std::filesystem::path& file) {
    std::map<std::string, std::string> translations;
    std::ifstream in(file);
    std::string line, msgid, msgstr, field;
    bool fuzzy = false;
    auto keep = [&] {
        if (!msgid.empty() && !fuzzy) translations[msgid] = msgstr;
        msgid.clear();
        msgstr.clear();
        field.clear();
        fuzzy = false;
    };
    while (std::getline(in, line)) {
        // An entry ends where the next one's comments or msgid begin.
        if (field == "msgstr" && (line.empty() || line[0] == '#' || line.rfind("msgid ", 0) == 0)) keep();
        if (line.rfind("#,", 0) == 0 && line.find("fuzzy") != std::string::npos) fuzzy = true;
        if (line.rfind("msgid ", 0) == 0) {
            field = "msgid";
            msgid = po_unquoted(line);
        } else if (line.rfind("msgstr ", 0) == 0) {
            field = "msgstr";
            msgstr = po_unquoted(line);
        } else if (line.rfind("\"", 0) == 0 && !field.empty()) {
            (field == "msgid" ? msgid : msgstr) += po_unquoted(line);
        }
    }
    keep();
    return translations;
}
