#!/usr/bin/env python3
"""Writes soundfit(1) in roff from the command tree the binary describes.

Usage: soundfit --experimental-dump-help | scripts/install/manpage.py > soundfit.1

Input: swift-argument-parser's tool description (ToolInfo, serialization version 0): every
command with its abstract, discussion, arguments, options and flags, and its subcommands. So
the man page lists exactly the commands and options the binary has, each with its help text.
"""
import datetime
import json
import sys


def roff(text):
    """Text escaped for roff: backslashes, and a leading dot or quote on a line."""
    text = text.replace("\\", "\\e")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def text_of(value):
    """A help text: a string, or (newer ToolInfo versions) an object holding one."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("staticText", "text", "discussion"):
            if isinstance(value.get(key), str):
                return value[key]
        return " ".join(text_of(v) for v in value.values() if isinstance(v, (str, dict)))
    return str(value)


def spelled(name):
    kind, value = name.get("kind"), name.get("name")
    if kind == "long":
        return "--" + value
    if kind == "longWithSingleDash":
        return "-" + value
    return "-" + value


def synopsis_of(argument):
    names = argument.get("names") or []
    kind = argument.get("kind")
    value_name = argument.get("valueName") or "value"
    if kind == "positional":
        item = "<%s>" % value_name
    else:
        item = spelled(argument.get("preferredName") or names[0])
        if kind == "option":
            item += " <%s>" % value_name
    if argument.get("isRepeating"):
        item += " ..."
    return "[%s]" % item if argument.get("isOptional") else item


def arguments_section(arguments, out):
    shown = [a for a in arguments if a.get("shouldDisplay", True)]
    if not shown:
        return
    for argument in shown:
        kind = argument.get("kind")
        value_name = argument.get("valueName") or "value"
        if kind == "positional":
            label = "\\fI<%s>\\fR" % roff(value_name)
        else:
            names = [spelled(n) for n in argument.get("names") or []]
            label = ", ".join("\\fB%s\\fR" % roff(n) for n in names)
            if kind == "option":
                label += " \\fI<%s>\\fR" % roff(value_name)
        out.append(".TP")
        out.append(label)
        help_text = text_of(argument.get("abstract"))
        discussion = text_of(argument.get("discussion"))
        if discussion:
            help_text = (help_text + " " + discussion).strip()
        default = argument.get("defaultValue")
        if default not in (None, ""):
            help_text += " (default: %s)" % default
        out.append(roff(help_text) if help_text else "")


def command_section(command, path, out):
    name = " ".join(path)
    arguments = command.get("arguments") or []
    synopsis = " ".join(synopsis_of(a) for a in arguments if a.get("shouldDisplay", True))
    if command.get("subcommands"):
        synopsis = (synopsis + " <subcommand>").strip()
    out.append(".SS \\fB%s\\fR" % roff(name))
    out.append(".B %s" % roff(name))
    if synopsis:
        out.append(roff(synopsis))
    out.append(".PP")
    abstract = text_of(command.get("abstract"))
    if abstract:
        out.append(roff(abstract))
    discussion = text_of(command.get("discussion"))
    if discussion:
        out.append(".PP")
        out.append(roff(" ".join(discussion.split())))
    arguments_section(arguments, out)
    for sub in command.get("subcommands") or []:
        if sub.get("shouldDisplay", True):
            command_section(sub, path + [sub["commandName"]], out)


def main():
    tool = json.load(sys.stdin)
    root = tool["command"]
    name = root["commandName"]
    out = []
    date = datetime.date.today().isoformat()
    out.append('.TH "%s" "1" "%s" "SoundFit" "User Commands"' % (name.upper(), date))
    # No hyphenation and ragged right: option names stay whole, as a reader would type them.
    out.append(".nh")
    out.append(".ad l")
    out.append(".SH NAME")
    out.append("%s \\- %s" % (name, roff(text_of(root.get("abstract")))))
    out.append(".SH SYNOPSIS")
    out.append(".B %s" % name)
    out.append("[\\fIsubcommand\\fR] [\\fIoptions\\fR]")
    default = root.get("defaultSubcommand")
    if default:
        out.append(".PP")
        out.append("Without a subcommand, \\fB%s %s\\fR runs." % (name, roff(default)))
    out.append(".SH OPTIONS")
    arguments_section(root.get("arguments") or [], out)
    out.append(".SH COMMANDS")
    for sub in root.get("subcommands") or []:
        if sub.get("shouldDisplay", True):
            command_section(sub, [name, sub["commandName"]], out)
    out.append(".SH FILES")
    out.append(".TP")
    out.append("\\fI$XDG_STATE_HOME/soundfit\\fR (else \\fI~/.local/state/soundfit\\fR)")
    out.append("State: the current state, user patches, document settings.")
    out.append(".TP")
    out.append("\\fIPREFIX/share/soundfit/patches\\fR")
    out.append("Factory patches, found next to the installed binary (\\fB$SOUNDFIT_PATCHES\\fR or \\fB\\-\\-patches\\-dir\\fR override).")
    out.append(".SH SEE ALSO")
    out.append(".BR jackd (1),")
    out.append(".BR oscsend (1),")
    out.append(".BR oscdump (1)")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
