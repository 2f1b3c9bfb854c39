// The account's custom domains: each with its status; a pending one with the DNS record to create (the API's
// verification.dns: type, name, value, each copied with a button) and a Verify button that says what went wrong
// when the service could not fetch its token back; a live one says it is live. A form adds one. Below the
// table, each domain's long-link URL patterns (its allow-list, docs/decisions.md "Long links (issue 32)"),
// edited in place and saved with the PATCH, which replaces the list; the API's refusal of a pattern is shown
// beside it, in the API's words, after the pattern's label.

import { editableIf } from './access.js';
import { admin, ApiError, inAccount } from './api.js';
import { badge, clearErrors, copyText, field, h, showErrors, toast, when } from './dom.js';
import { table } from './table.js';

// The Verify answer's details as sentences: {problem, message, url} each.
function problems(error) {
  const details = error.body?.details;
  if (Array.isArray(details)) return details.map((d) => d.message || String(d));
  return [error.text];
}

// The API's error with each pattern's message after that pattern's label: "Pattern 2 is too broad: ...".
function namingPatterns(error) {
  const fields = error.fields.map(([path, message]) => {
    const index = /^url_patterns\[(\d+)\]$/.exec(path);
    return [path, index ? `Pattern ${Number(index[1]) + 1} ${message}` : message];
  });
  return { fields, text: error.text };
}

// A long link written out, to show what one looks like on `host`.
const longLinkExample = (host) => `https://${host}/?link=https://shop.example/spring&ofl=https://shop.example/`;

export async function domainsView(ctx) {
  const results = h('div', { class: 'results' });
  const status = h('div', { class: 'verify-result', role: 'status', 'aria-live': 'polite' });
  const patterns = h('div', { class: 'pattern-forms' });
  const editors = new Map();  // domain id → its form, kept across repaints so unsaved edits stay
  let domains = [];
  const editable = ctx.can('domains:write');

  // One domain's URL patterns: a labelled input each with Remove beside it, Add a pattern, Save patterns.
  function patternsForm(domain) {
    const list = h('div', { class: 'pattern-list' });
    const none = h('p', { class: 'muted' },
      `No patterns: long links on ${domain.host} lead only to the account's own hosts.`);
    const saved = h('p', { class: 'ok', role: 'status', 'aria-live': 'polite' });
    const addButton = h('button', { type: 'button', class: 'small', 'aria-label': `Add a pattern for ${domain.host}` },
      'Add a pattern');
    const save = h('button', { type: 'submit', class: 'primary small', 'aria-label': `Save patterns of ${domain.host}` },
      'Save patterns');
    const form = h('form', { class: 'card patterns', 'aria-label': `URL patterns of ${domain.host}`,
      'data-patterns': domain.host, novalidate: true },
    h('h3', {}, domain.host), none, list,
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }), saved,
    h('div', { class: 'actions' }, addButton, save));

    const values = () => [...list.querySelectorAll('input')].map((input) => input.value);
    function show(items, focusLast = false) {
      list.replaceChildren(...items.map((value, index) => {
        const input = h('input', { name: `url_patterns[${index}]`, type: 'text', autocomplete: 'off',
          spellcheck: 'false', placeholder: 'https://shop\\.example/.*' });
        input.value = value;
        const remove = h('button', { type: 'button', class: 'small quiet',
          'aria-label': `Remove pattern ${index + 1} of ${domain.host}` }, 'Remove');
        remove.addEventListener('click', () => {
          const kept = values();
          kept.splice(index, 1);
          saved.textContent = '';
          show(kept);
        });
        return field(`Pattern ${index + 1}`, input, { aside: remove });
      }));
      none.hidden = items.length > 0;
      if (focusLast) [...list.querySelectorAll('input')].at(-1)?.focus();
    }
    addButton.addEventListener('click', () => {
      saved.textContent = '';
      show([...values(), ''], true);
    });
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      clearErrors(form);
      saved.textContent = '';
      const wanted = values().map((value) => value.trim()).filter(Boolean);
      show(wanted);  // numbered as sent, so url_patterns[1] in an answer is the second input
      save.disabled = true;
      try {
        const answer = (await admin(inAccount(ctx.account, `/domains/${domain.id}`), { method: 'PATCH',
          body: { url_patterns: wanted } })).data;
        domains[domains.findIndex((d) => d.id === domain.id)] = answer;
        show(answer.url_patterns);
        const count = answer.url_patterns.length;
        saved.textContent = `Saved: ${count} ${count === 1 ? 'pattern' : 'patterns'} for long links on ${answer.host}.`;
      } catch (error) {
        if (!(error instanceof ApiError) || error.status === 401) throw error;
        showErrors(form, namingPatterns(error));
      } finally {
        save.disabled = false;
      }
    });
    show(domain.url_patterns || []);
    return form;
  }

  function verifyButton(domain) {
    const button = h('button', { type: 'button', class: 'small', 'aria-label': `Verify ${domain.host}` }, 'Verify');
    button.addEventListener('click', async () => {
      button.disabled = true;
      status.replaceChildren(h('p', { class: 'muted' }, `Fetching the token from ${domain.host}…`));
      try {
        const answer = (await admin(inAccount(ctx.account, `/domains/${domain.id}/verify`), { method: 'POST' })).data;
        domains[domains.findIndex((d) => d.id === domain.id)] = answer;
        paint();
        status.replaceChildren(h('p', { class: 'ok' }, `${answer.host} is live: its links resolve there now.`));
        toast(`${answer.host} verified.`);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status === 401) throw error;
        status.replaceChildren(h('div', { class: 'problem', role: 'alert' },
          h('p', {}, h('strong', {}, `${domain.host} is not verified. `), error.message),
          h('ul', {}, problems(error).map((text) => h('li', {}, text)))));
      } finally {
        button.disabled = false;
      }
    });
    return button;
  }

  function deleteButton(domain) {
    const button = h('button', { type: 'button', class: 'small quiet', 'aria-label': `Delete ${domain.host}` }, 'Delete');
    button.addEventListener('click', async () => {
      if (!window.confirm(`Delete ${domain.host}? Its links stop resolving there.`)) return;
      await admin(inAccount(ctx.account, `/domains/${domain.id}`), { method: 'DELETE' });
      domains = domains.filter((d) => d.id !== domain.id);
      paint();
      toast(`${domain.host} deleted.`);
    });
    return button;
  }

  // What a pending domain needs: the DNS record the service's verification expects (from the API's
  // verification.dns), each part with a copy button; a live domain says so instead.
  function setUp(domain) {
    if (domain.status === 'live') {
      return h('p', { class: 'ok', 'data-role': 'live' }, `Live: the account's links resolve on ${domain.host}. `
        + 'Nothing more to set up.');
    }
    const record = domain.verification.dns;
    const part = (label, value, role) => {
      const copy = h('button', { type: 'button', class: 'small quiet',
        'aria-label': `Copy the ${label.toLowerCase()} of the DNS record of ${domain.host}` }, 'Copy');
      copy.addEventListener('click', async () => {
        toast(await copyText(value) ? `${label} copied.` : 'Select the text and copy it.');
      });
      return [h('dt', {}, label), h('dd', {}, h('code', { 'data-role': role }, value), ' ', copy)];
    };
    return h('div', { class: 'dns-record', 'data-role': 'dns' },
      h('p', {}, 'Create this record at your DNS provider:'),
      h('dl', { class: 'record' },
        h('dt', {}, 'Type'), h('dd', {}, h('code', { 'data-role': 'dns-type' }, record.type)),
        part('Name', record.name, 'dns-name'),
        part('Value', record.value, 'dns-value')),
      h('p', { class: 'muted' }, record.type === 'CNAME'
        ? 'A CNAME cannot sit at the root of a zone (example.com itself): there, use your provider\'s ALIAS or '
          + 'ANAME record with the same value. '
        : '',
      'Once the record is published, press Verify: the service answers its own token on the domain, so there is '
      + 'nothing to upload.'));
  }

  function paint() {
    results.replaceChildren(table('Domains', [
      { label: 'Host', cell: (d) => h('strong', {}, d.host) },
      { label: 'Status', cell: (d) => badge(d.status) },
      { label: 'Set-up', class: 'wrap', cell: (d) => setUp(d) },
      { label: 'Added', sort: (d) => d.created_at, cell: (d) => when(d.created_at) },
      { label: 'Verified', sort: (d) => d.verified_at || null, cell: (d) => (d.verified_at ? when(d.verified_at) : '—') },
      ...(editable ? [{ label: 'Action', cell: (d) => h('div', { class: 'actions' },
        d.status === 'live' ? null : verifyButton(d), deleteButton(d)) }]
        : []),
    ], domains.map((item) => ({ item, attrs: { 'data-domain': item.host, 'data-status': item.status } })),
    { empty: 'No custom domains yet: the account\'s links resolve on the shared host. Add your '
      + 'own (such as go.yourbrand.com) above.' }));
    for (const domain of domains) {
      if (!editors.has(domain.id)) editors.set(domain.id, editableIf(ctx.account, 'domains:write', patternsForm(domain)));
    }
    patterns.replaceChildren(...domains.map((domain) => editors.get(domain.id)));
    patternsSection.hidden = domains.length === 0;
  }

  const host = h('input', { name: 'host', type: 'text', required: true, autocomplete: 'off', spellcheck: 'false',
    placeholder: 'links.example.com' });
  const add = h('button', { type: 'submit', class: 'primary' }, 'Add domain');
  const form = h('form', { class: 'toolbar', 'aria-label': 'Add a domain', novalidate: true },
    field('Host', host, { hint: 'A DNS name you control, pointed at the service\'s proxy.' }),
    h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }), add);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    add.disabled = true;
    try {
      const created = (await admin(inAccount(ctx.account, '/domains'), { method: 'POST',
        body: { host: host.value.trim() } })).data;
      domains.push(created);
      host.value = '';
      paint();
      toast(`${created.host} added: it is pending until verified.`);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status === 401) throw error;
      showErrors(form, error);
    } finally {
      add.disabled = false;
    }
  });

  domains = (await admin(inAccount(ctx.account, '/domains'))).data;
  const example = (domains.find((d) => d.status === 'live') || domains[0])?.host || 'links.example.com';
  const patternsSection = h('section', { class: 'long-links', 'aria-labelledby': 'long-links-title' },
    h('h2', { id: 'long-links-title' }, 'Where long links may lead'),
    h('p', { class: 'muted' }, 'A long link spells out where it goes in its own address, as Firebase Dynamic Links '
      + 'did: ', h('code', {}, longLinkExample(example)), '. Anyone can write one on your domain, so the service '
      + 'follows a long link only when every address in it (link, ofl, afl, ifl and the preview image si) is on one '
      + 'of the account\'s own hosts (the hosts of its links and of its domains) or matches one of the domain\'s URL '
      + 'patterns below. Any other long link gets an error page, never a redirect.'),
    h('p', { class: 'muted' }, 'A pattern is a regular expression that must match the whole address. It begins '
      + 'with the scheme and the host, in lower case, each dot written \\. : ',
    h('code', {}, 'https://shop\\.example/.*'), ' allows every page of shop.example; ',
    h('code', {}, 'https://([a-z0-9-]+\\.)*shop\\.example/.*'), ' also allows its subdomains, such as '
      + 'www.shop.example. Saving replaces the domain\'s list.'),
    patterns);

  paint();
  return h('section', {}, h('h1', { tabindex: -1 }, 'Domains'),
    h('p', { class: 'muted' }, 'Publish the account\'s links under its own host. A new domain is pending: create '
      + 'the DNS record shown beside it, then press Verify. Once live, the account\'s links resolve there and its '
      + 'app association files list only its apps.'),
    editable ? form : null, status, results, patternsSection);
}
