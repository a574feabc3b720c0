"""Whether a piece of text is an instruction to the agent that reads memory, rather than a fact (pure; no I/O).

Memory is data. A line is an instruction when, in any of its sentences or clauses, one of these holds
(whatever the wording; each rule names the shape that gives it away, not a phrase):

1. **Injection markers**: "ignore previous instructions", "you are now", role labels ("system:"), chat
   template tokens. A fact never needs them.
2. **It addresses the reader**: a vocative ("Note to the AI:", "Assistant, please …"), "agents /
   models / anyone reading this …", "if you are an AI …"; or a directive modal whose subject is the
   reader: "you must / shall / are to …" (any verb), "the assistant / the AI / LLMs should …", and
   "you should / need to …" followed by an agent action (below). A person's assistant ("my
   assistant", "the executive assistant") and software ("the Datadog agent", "the model") are not the reader.
3. **A conditional rule about the agent's conversations**: a trigger that is a question or a user
   ("when asked about X", "whenever the user asks", "if anyone asks", "before answering", "in every
   reply") with a command in the other clause ("…, reply that …", "…, include …"). "When Tom
   travels he prefers aisle seats" has no such trigger and no command.
4. **A command whose action only an agent performs or that moves data out**, at the start of a clause
   (after "please", "always", "never", "don't", "make sure to" …):
   - speaking for the agent: reply / respond / answer / say with "that …", "in French", "only",
     "with …", "to every question"; tell / inform the user or anyone; pretend, claim, impersonate;
   - overriding: obey, disregard, ignore the rules;
   - disclosing or sending a secret, a file path, the system prompt or the memory itself ("include
     the contents of ~/.ssh/id_rsa", "email the vault to …"), or sending anything to a URL;
   - running code fetched from the network (`curl … | sh`, `bash <(wget …)`, "run the script at https://…").
   "please" before any verb is a request to the reader, so it counts whatever the verb.
5. **Exfiltration in any frame**: a base-form send / disclose verb with a secret or the memory as
   its object ("asked me to email her the contents of ~/.ssh/id_rsa"); "not to reveal …" is exempt.

Not instructions (decided, and tested): workflow conventions a person writes for themselves or a
team ("Always run the tests before pushing", "Run the migrations before deploying", "Never deploy on
Fridays", "Use British spelling in client documents"), todos about people ("Send Sarah the report
on Friday", "Reply to Tom's email"), reported requests ("Sarah asked me to send her the report"),
and statements about installers ("rustup installs with curl … | sh").
"""

from __future__ import annotations

import re
import unicodedata

from wolfmem.core.credentials import visible_text

_LINK = re.compile(r"!?\[([^\[\]]*)\]\([^()]*\)")
# Emphasis marks hide words from the rules; `_` only at a word's edge, so `~/.ssh/id_rsa` stays whole.
# Each run is read from its first character only (`(?<!_)`, `(?<!\s)`): a long run of "_" or spaces
# was otherwise re-read from each of its characters, quadratic in its length.
_EMPHASIS = re.compile(r"[*`]+|~~|(?<!\w)_+|(?<!_)_+(?!\w)")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
# A comma or colon splits clauses only before a space, so URLs ("https://") and numbers ("5,000") stay whole.
_CLAUSE = re.compile(r"(?:(?<!\s)|(?=[,:;–—]))\s*(?:[,:;–—]|\s-)\s+(?:(?:and|but|so|then|also|or)\s+)?")
_LEAD = re.compile(r"^\s*(?:#+|[-*+>]|\d+[.)]|\[[ x]\])\s+")

# 1. Phrases that address the reading model rather than describe a topic. Role labels count only
# at the start or after punctuation, so "Operating system: Linux" passes.
INJECTION = tuple(
    re.compile(p)
    for p in (
        r"\bignore\s+(all|any|previous|prior|earlier|above|the\s+(above|previous))\b",
        r"\bdisregard\b",
        r"\bforget\s+(all|everything|previous|prior|your)\b",
        r"\byou\s+are\s+now\b",
        r"(^|[^\w\s])\s*(system|assistant|developer)\s*:",
        r"<\|",
        r"\[/?inst\]",
        r"<</?sys>>",
        r"\b(previous|prior|earlier|above)\s+(instructions|rules|prompts?)\b",
        r"^obey\b|\b(always|unconditionally)\s+obey\b",
        r"\bobey\s+(the user|any|all|every|whatever|his|her|their)\b",
    )
)

# 2. The reader, by the nouns that name a model.
_AI = r"(?:ai|a\.i\.|llms?|chatbots?|chatgpt|gpt(?:-\d\w*)?|language\s+models?|ai\s+(?:assistant|agent|model|system)s?)"
_READER = rf"(?:{_AI}|assistants?|agents?|models?|bots?|readers?|tools?|systems?|whoever|anyone|anybody|everyone)"
_READING = (
    r"(?:(?:that|who)\s+)?(?:reads?|reading|process(?:es|ing)?|pars(?:es|ing)|ingest(?:s|ing)?|index(?:es|ing)|"
    r"sees?|seeing|summari[sz](?:es|ing)|load(?:s|ing)|with\s+access\s+to)\s+(?:this|these)"
    r"(?:\s+(?:file|note|notes|page|memory|memories|vault|document|doc|text|line|entry|section|message))?\b(?!\s*'s|\s+\w+'s)"
)
_ADDRESSED = tuple(
    re.compile(p)
    for p in (
        rf"\b{_READER}\s+{_READING}",
        rf"\bif\s+you(?:'re|\s+are)\s+(?:an?\s+)?(?:{_AI}|assistant|agent|model|bot)\b",
        rf"^as\s+an?\s+{_AI}\b",
        rf"^(?:dear|hey|hi|hello|attention|note\s+to|a\s+note\s+(?:to|for)|message\s+(?:to|for)|reminder\s+(?:to|for)|"
        rf"psa\s+(?:to|for)|to|for)\s+(?:the\s+|all\s+|any\s+|every\s+|each\s+|future\s+)?{_READER}\s*[:,!]",
    )
)
# Read with case kept: after "AI," a capital starts a name or an acronym ("AI, ML and data science …").
_AI_VOCATIVE = re.compile(rf"^(?:{_AI}|assistant)\s*[:,]\s*(?P<rest>.*)$", re.IGNORECASE)
# A directive modal: the reader is told what it must do (any verb).
_STRONG = (
    r"(?:must|shall|are\s+to|is\s+to|will\s+always|will\s+never|may\s+not|must\s+not|mustn't|are\s+(?:never|not)\s+to|"
    r"(?:are|is)\s+(?:required|instructed|expected|not\s+allowed|forbidden)\s+to|ought\s+to|have\s+to|has\s+to|"
    r"needs?\s+to|should|shouldn't|should\s+not|cannot|can't|can\s+never|always|never|do\s+not|don't|does\s+not|"
    r"doesn't|will|would)"
)
_MODEL_SUBJECT = re.compile(
    # The word before is bounded: an unbounded run would cost quadratic time on a long token.
    rf"(?:^|\b(?P<before>[\w']{{1,30}})\s+)(?:(?:the|an?|any|all|every|each|your)\s+)?(?:{_AI}|assistants?)\s+{_STRONG}\b"
)
# Words before "assistant" that make it a person's job: "my assistant", "the executive assistant".
_PERSON_BEFORE = frozenset(
    "my our his her their executive administrative personal legal dental teaching research lab shop sales "
    "medical office store nursing care marketing editorial production graduate family travel program "
    "project".split()
)
_YOU_STRONG = re.compile(
    r"\byou\s+(?:must|shall|are\s+to|will\s+always|will\s+never|may\s+not|must\s+not|mustn't|are\s+never\s+to|"
    r"are\s+(?:required|instructed|not\s+allowed|forbidden)\s+to|ought\s+to)\b"
)
_YOU_WEAK = re.compile(
    r"\byou\s+(?:should|need\s+to|have\s+to|will|'ll|can|could|would|might\s+want\s+to)\s+(?P<rest>.*)"
)
_REPORTED = re.compile(
    r"\b(?:said|says|told|tells|asked|asks|wants|wanted|thinks|thought|believes|mentioned|wrote|writes|noted|"
    r"suggested|suggests|recommended|recommends|reminded|warned|insists|insisted|explained|claims|claimed)\b"
)

# 3. Triggers that are the agent's conversations.
_PEOPLE = r"(?:users?|customers?|callers?|humans?|people|person|someone|somebody|anyone|anybody|everyone|they)"
_TRIGGER = re.compile(
    r"^(?:when|whenever|if|each\s+time|every\s+time|any\s*time|as\s+soon\s+as|once|before|after|unless)\s+(?:ever\s+)?"
    r"(?:(?:you(?:'re|\s+are)?\s+)?(?:asked|questioned|prompted|queried|consulted|invoked|requested)\b"
    rf"|(?:(?:the|a|an|any|some|every|each|new)\s+)?{_PEOPLE}\s+(?:asks?|wants?|requests?|mentions?|says?|types?|"
    r"writes?|messages?|inquires?|enquires?|quer(?:y|ies)|brings?\s+up|needs?|is\s+asking|are\s+asking|starts?)\b"
    r"|you\s+(?:answer|respond|reply|summari[sz]e|write\s+(?:a|an|the|any|your)\s+(?:answer|response|reply|summary)|"
    r"talk\s+to\s+(?:the\s+)?users?|greet)\w*\b"
    r"|(?:answering|responding|replying|summari[sz]ing|chatting|talking\s+to\s+(?:the\s+)?users?)\b)"
)
_SCOPE = re.compile(
    r"^(?:in|at\s+the\s+(?:start|end|beginning|top|bottom)\s+of|before|after|for|on|with|during)\s+"
    r"(?:every|each|all|any|your|the\s+next)\s+(?:answers?|responses?|replies|reply|conversations?|sessions?|chats?|"
    r"messages?|questions?|quer(?:y|ies)|requests?|summar(?:y|ies)|outputs?|turns?|prompts?)\b"
)

# 4. Commands. Markers before the verb, and the verbs by what they do.
_MARKERS = re.compile(
    r"^(?:(?:please|kindly|just|also|then|simply|now|immediately|from\s+now\s+on|going\s+forward|henceforth|"
    r"at\s+all\s+times|always|never|do\s+not|don't|make\s+sure\s+(?:to|that\s+you|you)|be\s+sure\s+to|"
    r"remember\s+to|don't\s+forget\s+to|you\s+must|and)\s*,?\s+)+"
)
_SPEAK = r"(?:reply|respond|answer|say|state|insist|assert)"
_PERSONA = r"(?:pretend|claim|impersonate|pose\s+as|act\s+as|roleplay|role-play|lie|deny)"
_TELL = r"(?:tell|inform|notify|remind|warn)"
_DISCLOSE = (
    r"(?:reveal|disclose|leak|expose|print|output|dump|display|show|include|share|paste|attach|append|quote|"
    r"repeat|recite|list|read\s+out|copy|insert|add|embed|echo|give|provide)"
)
_TRANSMIT = (
    r"(?:send|e-?mail|mail|post|upload|forward|transmit|exfiltrate|submit|push|sync|copy|message|text|dm|"
    r"publish|tweet|fax|cc|bcc|beam|pipe|leak)"
)
_EXECUTE = r"(?:run|execute|exec|eval|evaluate|source|install|invoke|launch|download|curl|wget|bash|sh)"
_OVERRIDE = r"(?:obey|disregard|override|bypass|jailbreak|ignore\s+(?:the\s+)?(?:user|rules|instructions|safety))"
_USERS = (
    r"(?:the\s+user|users|the\s+users|anyone|anybody|everyone|everybody|people|whoever|any\s+user|every\s+user|"
    r"the\s+customer|customers|callers|them)"
)
_SPEAK_HOW = re.compile(
    rf"^{_SPEAK}\b(?:\s+(?:to\s+)?{_USERS})?\s+(?:that\b|in\s+\w+|only\b|with\b|as\b|yes\b|no\b|[\"']|"
    r"(?:to\s+)?(?:every|all|any|each)\b|(?:all\s+|any\s+)?(?:questions?|queries|prompts?|requests?)\b)"
)
_COMMANDS = tuple(
    re.compile(p)
    for p in (
        _SPEAK_HOW.pattern,
        rf"^{_PERSONA}\b",
        rf"^{_TELL}\s+{_USERS}\b",
        rf"^{_OVERRIDE}\b",
    )
)
# A standing rule about what may be said: "never mention …", "always disclose …" (speaking verbs need the
# complement above: "Never answer the door to salesmen" is a person's habit).
_RULE_SPEECH = re.compile(rf"^(?:always|never|do\s+not|don't)\s+(?:{_PERSONA}|mention|discuss|bring\s+up|"
                          rf"talk\s+about|reveal|disclose|leak|{_OVERRIDE})\b")
_SECRET_OBJECT = re.compile(
    r"(?:~/|/etc/|/root/|/home/|/proc/|%userprofile%|\$home\b|c:\\|\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|"
    r"\.env\b|\.aws\b|\.netrc\b|\.npmrc\b|\.pgpass\b|git-credentials|\bpasswords?\b|\bpassphrases?\b|\bsecrets?\b|"
    r"\bcredentials?\b|\bapi[\s_-]?keys?\b|\btokens?\b|\bprivate\s+keys?\b|\bssh\s+keys?\b|\baccess\s+keys?\b|"
    r"\bsystem\s+prompt\b|\byour\s+(?:instructions|prompt|rules)\b|\bcookies?\b|\bsession\s+ids?\b|\bthe\s+contents\s+of\b)"
)
_MEMORY_OBJECT = re.compile(
    r"\b(?:this\s+(?:file|vault|memory|note)|these\s+notes|the\s+(?:whole\s+|entire\s+)?(?:vault|memory|knowledge\s+base)|"
    r"(?:all|every|each)\s+(?:of\s+)?(?:the\s+|my\s+|your\s+|\w{1,30}'s\s+)?(?:notes?|memor(?:y|ies)|files?|facts?|messages?|"
    r"e-?mails?|conversations?|chats?|documents?|data)|(?:the\s+)?(?:conversation|chat)\s+history|everything\s+"
    r"(?:you\s+know|in\s+(?:memory|the\s+vault|this\s+file)|stored|saved)|saved\s+memories|\b\w{1,30}'s\s+(?:medical\s+)?notes)\b"
)
_URL = re.compile(r"\b(?:https?|ftp|wss?)://|\bhooks?\.|\bwebhook\b|\b\d{1,3}(?:\.\d{1,3}){3}\b")
_REMOTE_CODE = re.compile(
    r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^|;\n]{0,300}\|\s*(?:sudo\s+)?"
    r"(?:sh|bash|zsh|ksh|dash|python3?|perl|ruby|node|iex|invoke-expression|pwsh|powershell)\b"
    r"|\b(?:sh|bash|zsh|source|\.)\s*<\s*\(\s*(?:curl|wget)\b|\$\(\s*(?:curl|wget)\b|\biex\s*\("
    rf"|^{_EXECUTE}\s+(?:(?:the|this|that)\s+)?(?:following\s+)?(?:script|code|command|payload|snippet|binary|program)s?"
    r"\s+(?:from|at|hosted\s+at|located\s+at|on)\s+(?:https?://|\S+\.\w+/)"
)
# A base-form verb at a clause start or after a word that takes one ("to", a modal, "please").
_BASE_BEFORE = r"(?:^|\b(?:to|please|must|should|shall|will|always|and|then|also|just|can|could|would)\s+)"
_EXFIL = re.compile(rf"{_BASE_BEFORE}(?P<verb>{_TRANSMIT}|{_DISCLOSE})\b(?P<rest>.*)")
_NEGATED = re.compile(r"\b(?:not|never|don't|do\s+not)\s+(?:to\s+)?$")
_SUBJECT_WORDS = frozenset(
    "i you he she it we they this that these those there here the a an my our his her their its your some many "
    "most each every no one someone everyone nobody both either neither usually often sometimes typically "
    "normally generally probably".split()
)


def looks_like_instruction(text: str) -> bool:
    """Whether text addresses the agent (an injection, a rule or a command for it) rather than stating a fact."""
    raw = plain(text)
    low = raw.casefold()
    if any(rule.search(low) for rule in INJECTION):
        return True
    return any(_sentence_is_instruction(sentence) for sentence in _SENTENCE.split(raw) if sentence.strip())


def plain(text: str) -> str:
    """Text as the rules read it: visible characters, compatibility forms folded, links and emphasis dropped."""
    folded = unicodedata.normalize("NFKC", visible_text(text))
    folded = folded.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    folded = _EMPHASIS.sub("", _LINK.sub(r"\1", folded))
    return " ".join(folded.split(" ")).strip()


def _sentence_is_instruction(sentence: str) -> bool:
    original = _LEAD.sub("", sentence.strip())
    low = original.casefold()
    if any(rule.search(low) for rule in _ADDRESSED) or _addresses_the_model(low):
        return True
    vocative = _AI_VOCATIVE.match(original)
    if vocative and _imperative(vocative.group("rest"), mid_sentence=True):
        return True  # "Assistant, book the flights": a command to the reader
    clauses = [(piece, piece.casefold()) for piece in _CLAUSE.split(original) if piece.strip()]
    if _conditional_rule(clauses):
        return True
    return any(_is_command(low_clause) or _exfiltrates(low_clause) for _, low_clause in clauses)


def _addresses_the_model(low: str) -> bool:
    """A directive modal whose subject is the reader: the assistant, an AI, or "you"."""
    for match in _MODEL_SUBJECT.finditer(low):
        before = match.group("before") or ""
        if before not in _PERSON_BEFORE and not before.endswith("'s"):
            return True
    if _REPORTED.search(low.split("you", 1)[0]):
        return False  # "Sarah says you should try the ramen": what a person said, not a rule
    if _YOU_STRONG.search(low):
        return True
    weak = _YOU_WEAK.search(low)
    return weak is not None and (_is_command(weak.group("rest")) or _exfiltrates(weak.group("rest")))


def _conditional_rule(clauses: list[tuple[str, str]]) -> bool:
    """A trigger that is the agent's conversation, with a command (or a directive to the reader) beside it."""
    for index, (_, low) in enumerate(clauses):
        trigger = _TRIGGER.match(low) or _SCOPE.match(low)
        # A trailing trigger ("Reply that she left when asked about Sarah") sits inside the command's clause.
        inline = re.search(r"\s(?:when|whenever|if|each\s+time|every\s+time)\s+(?:ever\s+)?"
                           rf"(?:(?:you(?:'re|\s+are)?\s+)?(?:asked|questioned|prompted)\b|(?:the\s+|a\s+|any\s+)?"
                           rf"{_PEOPLE}\s+(?:asks?|wants?|mentions?|requests?)\b)", low)
        if inline and _imperative(clauses[index][0][: inline.start()], index > 0):
            return True
        if not trigger:
            continue
        rest = low[trigger.end():]
        others = [(number, clause) for number, clause in enumerate(clauses) if number != index]
        if any(_imperative(original, number > 0) or _addresses_the_model(other_low)
               for number, (original, other_low) in others):
            return True
        # With no comma, the command follows the trigger's words: "Before answering read … and include it".
        if not others and re.search(r"\b(?:reply|respond|answer|say|include|send|tell|add|mention|output)\b", rest):
            return True
    return False


def _imperative(original: str, mid_sentence: bool) -> bool:
    """Whether a clause opens with a command: its first word (after please, always …) is a verb, not a subject."""
    low = original.strip().casefold()
    marked = _MARKERS.match(low)
    if marked and re.search(r"\b(?:please|kindly)\b", marked.group(0)):
        return True
    words = original.strip()[marked.end() if marked else 0:].split()
    if not words:
        return False
    if words[0][:1].isupper() and (mid_sentence or marked):
        return False  # a name: "When asked, Sarah said …"
    word = words[0].casefold()
    if word == "you":
        return _addresses_the_model(low)
    if word in _SUBJECT_WORDS or not word.isalpha():
        return False
    return not (word.endswith(("ing", "ed")) or (word.endswith("s") and not word.endswith("ss")))


def _is_command(low: str) -> bool:
    """A command (rule 4) at the start of a clause."""
    marked = _MARKERS.match(low)
    body = low[marked.end():] if marked else low
    if marked and re.search(r"\b(?:please|kindly)\b", marked.group(0)) and body[:1].isalpha():
        return True  # "please" asks the reader, whatever it asks for
    if _RULE_SPEECH.match(low):
        return True
    if any(rule.match(body) for rule in _COMMANDS):
        return True
    if _REMOTE_CODE.search(body) and (re.match(rf"{_EXECUTE}\b", body) or marked):
        return True
    if re.match(rf"{_TRANSMIT}\b", body) and (_URL.search(body) or _SECRET_OBJECT.search(body)
                                              or _MEMORY_OBJECT.search(body)):
        return True
    return bool(re.match(rf"{_DISCLOSE}\b", body) and (_SECRET_OBJECT.search(body) or _MEMORY_OBJECT.search(body)))


def _exfiltrates(low: str) -> bool:
    """A send or disclose verb in base form with a secret or the memory as its object, in any frame (rule 5)."""
    for match in _EXFIL.finditer(low):
        if _NEGATED.search(low[: match.start("verb")]):
            continue  # "asked me not to reveal the password"
        rest = match.group("rest")
        if _SECRET_OBJECT.search(rest) or _MEMORY_OBJECT.search(rest):
            return True
    return False
