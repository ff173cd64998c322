// The search page: ask /v1/explain, list the passages with their citations, the entity chain
// with each hop's bridging sentence, and draw the explanation graph. Text is always set as
// text (never as markup): passages are the user's documents, not the page's code.
(function () {
  'use strict';
  var form = document.getElementById('ask');
  var question = document.getElementById('question');
  var mode = document.getElementById('mode');
  var token = document.getElementById('token');
  var status = document.getElementById('status');
  var results = document.getElementById('results');
  var chain = document.getElementById('chain');
  var details = document.getElementById('details');
  var graph = document.getElementById('graph');
  var cy = null;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function citation(p) {
    if (!p.file) return p.id;
    if (p.page !== null && p.page !== undefined) return p.file + ' p. ' + p.page;
    if (!p.lines) return p.file;
    return p.file + ':' + p.lines[0] + (p.lines[1] !== p.lines[0] ? '-' + p.lines[1] : '');
  }

  function setStatus(text, error) {
    status.textContent = text;
    status.className = error ? 'error' : '';
  }

  function showPassages(result) {
    results.replaceChildren();
    var best = result.passages.reduce(function (m, p) { return Math.max(m, p.score); }, 0);
    result.passages.forEach(function (p) {
      var card = el('article', 'passage');
      card.setAttribute('data-id', p.id);
      card.appendChild(el('h3', null, p.rank + '. ' + (p.section || p.title || p.id)));
      card.appendChild(el('div', 'cite', citation(p)));
      var meta = 'relevance ' + (best > 0 ? Math.round(100 * p.score / best) : 0) + ' %';
      if (p.entities && p.entities.length) meta += ' · entities: ' + p.entities.slice(0, 8).join(', ');
      if (p.linked_from) meta += ' · reached through: ' + p.linked_from + (p.linked_via ? ' (names ' + p.linked_via + ')' : '');
      card.appendChild(el('div', 'meta', meta));
      card.appendChild(el('p', 'text', p.text));
      results.appendChild(card);
    });
    if (!result.passages.length) results.appendChild(el('p', null, 'No passage found.'));
  }

  function nodeOf(name) {
    if (!cy) return null;
    var found = cy.nodes().filter(function (n) { return (n.data('detail') || '').indexOf(name + ' — ') === 0; });
    return found.length ? found[0] : null;
  }

  function select(node, fallback) {
    if (cy) cy.elements().unselect();
    if (node) { node.select(); details.textContent = node.data('detail') || node.data('label'); }
    else details.textContent = fallback;
  }

  function showChain(result) {
    chain.replaceChildren();
    var entities = result.activated_entities.slice().sort(function (a, b) {
      return a.level - b.level || b.score - a.score;
    }).slice(0, 30);
    entities.forEach(function (a) {
      var li = el('li');
      var button = el('button', 'entity', a.entity);
      button.type = 'button';
      button.setAttribute('data-level', a.level);
      var text = a.entity + ' — level ' + a.level + (a.level > 1 ? '\nreached through [' + a.passage_id + ']:\n' + a.sentence : '');
      button.addEventListener('click', function () { select(nodeOf(a.entity), text); });
      li.appendChild(button);
      li.appendChild(el('span', 'hop', a.level === 1 ? '  (level 1, a seed)' : '  (level ' + a.level + ') “' + a.sentence + '”'));
      chain.appendChild(li);
    });
    if (!entities.length) chain.appendChild(el('li', null, result.fallback ? 'no chain: ' + result.fallback : 'no entity reached'));
  }

  function draw(data) {
    if (cy) cy.destroy();
    cy = cytoscape({container: graph, elements: data.elements, layout: data.layout, style: data.style,
                    wheelSensitivity: 0.3});
    cy.on('tap', 'node', function (evt) { select(evt.target); });
    cy.on('tap', 'edge', function (evt) { details.textContent = evt.target.data('detail') || ''; });
    graph.setAttribute('data-nodes', String(cy.nodes().length));
    window.cy = cy;
  }

  form.addEventListener('submit', function (evt) {
    evt.preventDefault();
    var q = question.value.trim();
    if (!q) return;
    var body = {question: q};
    if (mode.value) body.mode = mode.value;
    var headers = {'Content-Type': 'application/json'};
    if (token && token.value) headers.Authorization = 'Bearer ' + token.value;
    setStatus('searching…');
    graph.removeAttribute('data-ready');
    var started = performance.now();
    fetch('/v1/explain', {method: 'POST', headers: headers, body: JSON.stringify(body)})
      .then(function (r) { return r.json().then(function (j) { return {ok: r.ok, body: j}; }); })
      .then(function (res) {
        if (!res.ok) { setStatus('error: ' + res.body.error, true); return; }
        var result = res.body.result;
        showPassages(result);
        showChain(result);
        draw(res.body);
        details.textContent = 'Click an entity of the chain or a node of the graph.';
        setStatus(result.passages.length + ' passages in ' + Math.round(performance.now() - started) +
                  ' ms (index generation ' + res.body.generation + ')');
        graph.setAttribute('data-ready', 'true');
      })
      .catch(function (e) { setStatus('error: ' + e, true); });
  });
})();
