// Reading help on the assessors' pages: mark the words two texts share.
//
// A word counts when it has 4 letters or more and is not a stop word: short and function words match everywhere
// and would only add noise. Words are compared by their stems (the Porter stemmer, static/js/stemmer.js), without
// case and without a possessive 's, so that "eclipses" shares "eclipse" and "effects" "effect".
// The marks are <mark class="shared"> around the words in the page's text nodes.
(function () {
  "use strict";

  const STOP = new Set(
    (
      "about above after again against also although among another because been before being below between both " +
      "cannot could does doing done down during each either else even ever every from further given have having " +
      "here hers herself himself however into itself just least less like many might more most much must myself " +
      "neither never only other others ought ourselves over same shall should since some such than that their " +
      "theirs them themselves then there therefore these they this those though through thus under until upon " +
      "very were what whatever when where whether which while whom whose will with within without would your " +
      "yours yourself"
    ).split(" ")
  );
  const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu;
  const SHARED_TITLE = "a word both sides use, in some form (effect, effects)";

  // A possessive is its word ("Winkle’s" shares "Winkle"), as is a word with a trailing apostrophe or dash.
  function base(word) {
    return word.toLowerCase().replace(/['’]s$/, "").replace(/['’-]+$/, "");
  }
  // What two words are compared by: the stem of their base.
  function key(word) {
    return window.stemmer(base(word));
  }
  function counts(word) {
    const b = base(word);
    return b.length >= 4 && !STOP.has(b);
  }

  // The content words of a text, lowercased.
  function words(text) {
    const found = new Set();
    for (const match of text.matchAll(WORD)) if (counts(match[0])) found.add(key(match[0]));
    return found;
  }
  function shared(a, b) {
    return new Set([...a].filter((w) => b.has(w)));
  }

  function textNodes(element) {
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => (node.parentElement.closest("mark.shared") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    const nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    return nodes;
  }

  // Wrap the matches of `pattern` that `keep` accepts in element's text, each mark titled with what it means;
  // returns how many were marked.
  function wrap(element, pattern, keep, title) {
    let marked = 0;
    textNodes(element).forEach((node) => {
      const text = node.nodeValue;
      const parts = [];
      let last = 0;
      for (const match of text.matchAll(pattern)) {
        if (!match[0] || !keep(match[0])) continue;
        parts.push(document.createTextNode(text.slice(last, match.index)));
        const m = document.createElement("mark");
        m.className = "shared";
        m.title = title;
        m.textContent = match[0];
        parts.push(m);
        last = match.index + match[0].length;
        marked += 1;
      }
      if (!parts.length) return;
      parts.push(document.createTextNode(text.slice(last)));
      node.replaceWith(...parts);
    });
    return marked;
  }

  // Each occurrence of the given content words (whole words).
  function mark(element, wanted) {
    if (!wanted.size) return 0;
    return wrap(element, WORD, (word) => counts(word) && wanted.has(key(word)), SHARED_TITLE);
  }

  // Each occurrence of the given strings, inside words too (what a filter box matches).
  function markText(element, needles) {
    const escaped = needles.filter(Boolean).map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    if (!escaped.length) return 0;
    return wrap(element, new RegExp(escaped.join("|"), "giu"), () => true, "what the filter matched");
  }

  function clear(element) {
    element.querySelectorAll("mark.shared").forEach((m) => m.replaceWith(document.createTextNode(m.textContent)));
    element.normalize();
  }

  window.Highlight = { words, shared, mark, markText, clear };
})();
