// `quiz N`: the lesson's quick check (lessons/NN-*/quiz.json, made from the README's "Quick check"
// section) as multiple-choice questions in the terminal. Answers are read line by line from standard
// input, so a script can take the quiz too; the result is kept for `list`.
#include <cctype>
#include <iostream>
#include <optional>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "command.h"
#include "exit_codes.h"
#include "lesson_files.h"
#include "progress.h"
#include "translate.h"

namespace mgpu::cli {

using nlohmann::json;

namespace {

struct Question {
    std::string question;
    std::vector<std::string> choices;
    std::size_t answer = 0;  // index into choices
    std::string explanation;
};

std::vector<Question> read_quiz(const LessonFiles& lesson, std::string& section) {
    const auto file = lesson.lesson_folder / "quiz.json";
    const std::string text = read_text(file);
    if (text.empty()) throw SetupError(file.string() + " is missing: lesson " + std::to_string(lesson.number) + " has no quiz");
    json document = json::parse(text, nullptr, false);
    if (document.is_discarded() || !document.contains("questions"))
        throw SetupError(file.string() + " is not a quiz (a JSON object with a \"questions\" list)");
    section = document.value("section", std::string());
    std::vector<Question> questions;
    // Written in English; tr() gives each text in the student's language from the catalog.
    for (const json& entry : document.at("questions")) {
        std::vector<std::string> choices;
        for (const std::string& choice : entry.at("choices").get<std::vector<std::string>>()) choices.push_back(tr(choice));
        Question question{tr(entry.at("question").get<std::string>()), choices, entry.at("answer").get<std::size_t>(),
                          tr(entry.value("explanation", std::string()))};
        if (question.answer >= question.choices.size())
            throw SetupError(file.string() + ": the answer of \"" + question.question + "\" is not one of its choices");
        questions.push_back(std::move(question));
    }
    return questions;
}

char letter(std::size_t index) { return static_cast<char>('a' + index); }

// "b", "B", " b) " -> 1; nullopt for anything that is not one of the letters offered.
std::optional<std::size_t> chosen(const std::string& line, std::size_t choices) {
    for (char c : line) {
        if (c == ' ' || c == '\t' || c == ')' || c == '.' || c == '\r') continue;
        const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (lower < 'a' || static_cast<std::size_t>(lower - 'a') >= choices) return std::nullopt;
        std::size_t index = static_cast<std::size_t>(lower - 'a');
        return line.find_first_not_of(" \t).\r", line.find(c) + 1) == std::string::npos ? std::optional(index) : std::nullopt;
    }
    return std::nullopt;
}

int quiz(const Kit& kit, const ParsedArgs& args) {
    if (args.positionals.empty()) throw UsageError(tr("say which lesson's quiz to take, e.g. tools/mgpu quiz 1"));
    const LessonFiles lesson = lesson_files(kit, lesson_argument(args.positionals[0]));
    std::string section;
    const std::vector<Question> questions = read_quiz(lesson, section);
    const std::string n = std::to_string(lesson.number);
    // The Japanese catalog turns README.md into README.ja.md, the lesson's text in Japanese.
    const std::string readme = "lessons/" + lesson.lesson_folder.filename().string() + "/" + tr("README.md");
    const bool one = questions.size() == 1;
    std::cout << (section.empty() ? fill(tr(one ? N_("Lesson {} quiz: {} question. Answer it with its letter.")
                                                : N_("Lesson {} quiz: {} questions. Answer each with its letter.")),
                                         n, questions.size())
                                  : fill(tr(one ? N_("Lesson {} quiz: {} question from section {} of {}. Answer it with its letter.")
                                                : N_("Lesson {} quiz: {} questions from section {} of {}. Answer each with its letter.")),
                                         n, questions.size(), section, readme))
              << "\n";

    int right = 0;
    for (std::size_t i = 0; i < questions.size(); ++i) {
        const Question& question = questions[i];
        std::cout << "\n" << i + 1 << ". " << question.question << "\n";
        for (std::size_t c = 0; c < question.choices.size(); ++c) std::cout << "   " << letter(c) << ") " << question.choices[c] << "\n";
        std::optional<std::size_t> answer;
        while (!answer) {
            std::cout << tr("Your answer: ") << std::flush;
            std::string line;
            if (!std::getline(std::cin, line)) {
                std::cout << "\n" << fill(tr("The quiz stopped at question {} of {}: the input ended. Nothing was recorded; "
                                              "run tools/mgpu quiz {} again."),
                                           i + 1, questions.size(), n)
                          << "\n";
                return kExitSetupProblem;
            }
            if (!::isatty(STDIN_FILENO)) std::cout << line << "\n";  // a scripted answer shows in the transcript
            answer = chosen(line, question.choices.size());
            if (!answer)
                std::cout << fill(tr("'{}' is not one of the letters a to {}."), line, letter(question.choices.size() - 1)) << "\n";
        }
        std::string verdict;
        if (*answer == question.answer) {
            ++right;
            verdict = tr("Right.");
        } else {
            verdict = fill(tr("Not quite: the answer is {})."), letter(question.answer));
        }
        // Two sentences in a row: English puts a space between them, Japanese none.
        std::cout << (question.explanation.empty() ? verdict : fill(tr("{0} {1}"), verdict, question.explanation)) << "\n";
    }

    const int asked = static_cast<int>(questions.size());
    const std::string score = fill(tr("Score: {} / {}."), right, asked);
    std::cout << "\n"
              << (right < asked ? fill(tr("{0} {1}"), score,
                                       fill(tr("Reread the sections the explanations name, then tools/mgpu quiz {} again."), n))
                                : score)
              << "\n";
    Progress record = Progress::load(progress_file(kit));
    record.lessons[lesson.number].quiz = QuizRecord{right, asked, utc_now_iso()};
    record.save(progress_file(kit));
    return right == asked ? kExitOk : kExitFailed;
}

}  // namespace

const Command quiz_command = {
    N_("Working on an exercise"),
    {
        .name = "quiz",
        .usage = "quiz LESSON",
        .summary = N_("Asks the lesson's quick-check questions and scores your answers."),
        .description = N_("The questions of the lesson's \"Quick check\" section (lessons/NN-*/quiz.json), each with a few\n"
                       "choices: answer with the letter. Each answer is marked at once, with the reason. Answers are\n"
                       "read one a line from standard input, so `printf 'a\\nc\\n' | tools/mgpu quiz 1` works too.\n"
                       "The score is kept in .mgpu/progress.json and shown by `tools/mgpu list`.\n"
                       "Exit codes: 0 every answer right, 1 some wrong, 2 the quiz could not be taken."),
        .max_positionals = 1,
        .examples = "  tools/mgpu quiz 3\n",
    },
    quiz,
};

}  // namespace mgpu::cli
