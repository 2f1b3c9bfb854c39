// The account's connections (documents of kind connection): the list with each one's deliveries by state, a form
// to create one (the destination, then the config fields it needs) and to edit one. A secret is never shown back:
// its field stays blank, and a blank secret keeps the stored one (the API keeps a masked value sent back). The
// test sends the vendor's own test event and shows its verdict; enable and disable switch forwarding. A webhook
// can also be sent the account's clicks (its config.clicks: clickhooks.js).

import { editableIf } from './access.js';
import { admin, inAccount, query } from './api.js';
import { clickErrorPath, clickSettings } from './clickhooks.js';
import { badge, clearErrors, field, h, showErrors, shownOnce, toast } from './dom.js';
import { table } from './table.js';
import { count } from './format.js';

const MASK = '********';
const DESTINATIONS = ['webhook', 'messaging', 'meta', 'tiktok', 'ga4', 'google_ads', 's3_export'];
const STATES = ['pending', 'delivered', 'filtered', 'skipped', 'failed', 'dead'];
// The config each destination reads (linksvc/forwarding/<destination>.py): [key, label, hint]. A key named like
// a secret is shown masked by the API and edited blank here.
const CONFIG = {
  webhook: [['endpoint_url', 'Endpoint URL', 'Where the signed POSTs go.'],
    ['secret', 'Signing secret', 'A whsec_ secret; left blank on creation, one is made and shown once.']],
  messaging: [['endpoint_url', 'Endpoint URL'], ['api_key', 'API key', 'Sent as Authorization: Bearer.']],
  meta: [['pixel_id', 'Pixel id'], ['access_token', 'Access token', 'A system-user token of the pixel.'],
    ['default_country_code', 'Default country code', 'Digits put before a phone without one.'],
    ['test_event_code', 'Test event code', 'For the connection test only.'], ['api_version', 'API version'],
    ['endpoint_url', 'Endpoint URL', 'Meta\'s own when blank.']],
  tiktok: [['pixel_code', 'Pixel code'], ['access_token', 'Access token'],
    ['test_event_code', 'Test event code', 'For the connection test only.'],
    ['endpoint_url', 'Endpoint URL', 'TikTok\'s own when blank.']],
  ga4: [['measurement_id', 'Measurement id', 'A web stream (G-…).'], ['firebase_app_id', 'Firebase app id',
    'An app stream.'], ['api_secret', 'API secret'], ['endpoint_url', 'Endpoint URL', 'Google\'s own when blank.']],
  google_ads: [['customer_id', 'Customer id'], ['conversion_action_id', 'Conversion action id'],
    ['access_token', 'Access token', 'Or the three OAuth fields below.'], ['client_id', 'OAuth client id'],
    ['client_secret', 'OAuth client secret'], ['refresh_token', 'Refresh token'],
    ['login_customer_id', 'Login customer id', 'A manager account, when it is one.'],
    ['developer_token', 'Developer token'], ['api_version', 'API version'],
    ['endpoint_url', 'Endpoint URL', 'Google\'s own when blank.']],
  s3_export: [],
};
const SECRET_WORDS = ['secret', 'token', 'password', 'passwd', 'api_key', 'apikey', 'access_key', 'private_key',
  'credential', 'authorization', 'signature'];
const isSecret = (key) => SECRET_WORDS.some((w) => key.toLowerCase().replace(/-/g, '_').includes(w));

export const connectionName = (c) => c.name || c.destination;

// "3 delivered, 1 failed": the states a connection's deliveries are in.
async function stateCounts(ctx, connection) {
  const counts = (await admin(inAccount(ctx.account, `/connections/${connection.id}/deliveries/counts${query(
    { limit: 1 })}`))).data.by_state;
  return STATES.filter((s) => counts[s]).map((s) => `${count(counts[s])} ${s}`).join(', ') || 'none yet';
}

// The connection's test: the vendor's verdict in `out`.
async function runTest(ctx, connection, out) {
  out.textContent = 'Sending a test event…';
  const answer = (await admin(inAccount(ctx.account, `/connections/${connection.id}/test`), { method: 'POST' })).data;
  out.textContent = [answer.outcome, answer.status ? `HTTP ${answer.status}` : null, answer.message]
    .filter(Boolean).join(': ');
  out.dataset.outcome = answer.outcome;
}

async function setEnabled(ctx, connection, enabled) {
  const updated = (await admin(inAccount(ctx.account, `/connections/${connection.id}`),
    { method: 'PATCH', body: { enabled } })).data;
  toast(`${connectionName(updated)} ${enabled ? 'enabled' : 'disabled'}.`);
  return updated;
}

export async function connectionsView(ctx) {
  const connections = (await admin(inAccount(ctx.account, `/connections${query({ limit: 500 })}`))).data;
  const counts = await Promise.all(connections.map((c) => stateCounts(ctx, c)));
  const rows = connections.map((item, i) => ({ item: { ...item, counts: counts[i] },
    attrs: { 'data-connection': item.id, 'data-name': connectionName(item), 'data-enabled': String(item.enabled) } }));

  const actions = (c) => {
    const out = h('span', { class: 'muted test-verdict', role: 'status' });
    const test = h('button', { type: 'button', class: 'small', 'aria-label': `Test ${connectionName(c)}` }, 'Test');
    test.addEventListener('click', async () => {
      test.disabled = true;
      try { await runTest(ctx, c, out); } finally { test.disabled = false; }
    });
    const toggle = h('button', { type: 'button', class: 'small quiet',
      'aria-label': `${c.enabled ? 'Disable' : 'Enable'} ${connectionName(c)}` }, c.enabled ? 'Disable' : 'Enable');
    toggle.addEventListener('click', async () => {
      toggle.disabled = true;
      await setEnabled(ctx, c, !c.enabled);
      ctx.navigate(`${ctx.base}/connections`, { replace: true });
    });
    return h('span', { class: 'actions' }, ctx.can('deliveries:write') ? test : null,
      ctx.can('connections:write') ? toggle : null, out);
  };

  return h('section', { class: 'connections' },
    h('div', { class: 'title-row' }, h('h1', { tabindex: -1 }, 'Connections'),
      ctx.can('connections:write') ? h('a', { class: 'button primary', href: `${ctx.base}/connections/new` },
        'New connection') : null),
    h('p', { class: 'muted' }, 'Where accepted events are forwarded: a webhook, a messaging platform or an ads or '
      + 'analytics vendor. Credentials are never shown back.'),
    table('Connections', [
      { label: 'Name', cell: (c) => h('a', { href: `${ctx.base}/connections/${c.id}` }, connectionName(c)) },
      { label: 'Destination', cell: (c) => [c.destination, c.config?.clicks ? h('span', { class: 'muted',
        title: 'config.clicks (link.clicked)' }, ' · sends clicks') : null] },
      { label: 'Status', cell: (c) => badge(c.enabled ? 'Enabled' : 'Disabled', c.enabled ? 'on' : 'off') },
      { label: 'Deliveries', class: 'wrap', cell: (c) => h('a', {
        href: `${ctx.base}/deliveries${query({ connection: c.id })}` }, c.counts) },
      { label: 'Actions', cell: actions },
    ], rows, { empty: 'No connections yet: nothing is forwarded. Add one with New connection to send the '
      + 'account\'s events to Meta, GA4, TikTok, Google Ads or a webhook.' }));
}

// The event types a connection forwards: every one ("*"), or PURCHASE and the account's custom types checked.
function eventTypesField(types, chosen) {
  const every = h('input', { type: 'checkbox', name: 'event_types', value: '*', checked: chosen.includes('*') });
  every.id = `f-event-types-${Math.random().toString(36).slice(2, 8)}`;
  const boxes = types.map((t) => h('input', { type: 'checkbox', name: 'event_type', value: t,
    checked: chosen.includes(t) }));
  const paint = () => { for (const box of boxes) box.disabled = every.checked; };
  every.addEventListener('change', paint);
  paint();
  const node = h('fieldset', { class: 'field wide event-types', 'data-field': 'event_types' },
    h('legend', {}, 'Event types forwarded'),
    h('label', { class: 'check' }, every, ' Every event type, also those added later'),
    boxes.map((box) => h('label', { class: 'check' }, box, ` ${box.value}`)),
    h('p', { class: 'field-error', id: `${every.id}-error`, 'aria-live': 'polite' }));
  node.value = () => (every.checked ? ['*'] : boxes.filter((b) => b.checked).map((b) => b.value));
  return node;
}

function configFields(destination, stored, editing) {
  const known = CONFIG[destination] || [];
  return known.map(([key, label, hint]) => {
    const secret = isSecret(key);
    const value = stored[key];
    const kept = editing && secret && value !== undefined && value !== null && value !== '';
    const control = h('input', { type: secret ? 'password' : 'text', name: `config.${key}`, autocomplete: 'off',
      spellcheck: 'false', value: secret || value === undefined || value === null ? '' : String(value),
      placeholder: kept ? 'stored: leave blank to keep it' : '', 'data-secret': secret ? 'yes' : null });
    return field(label, control, { hint: kept ? [hint, 'A new value replaces the stored one.'].filter(Boolean)
      .join(' ') : hint, wide: key === 'endpoint_url' });
  });
}

// The config to save: the stored one (secrets masked, which the API keeps as they are) with the fields typed,
// and a webhook's clicks as the section says (none: the member goes).
function configOf(form, destination, stored, editing, clicks) {
  const config = editing ? { ...stored } : {};
  delete config.clicks;
  const chosen = destination === 'webhook' ? clicks.value() : null;
  if (chosen) config.clicks = chosen;
  for (const [key] of CONFIG[destination] || []) {
    const value = form.querySelector(`[name="config.${key}"]`).value.trim();
    if (value) config[key] = value;
    else if (isSecret(key) && editing && stored[key] !== undefined) config[key] = MASK;  // keep the stored one
    else delete config[key];
  }
  return config;
}

// Errors of event_types[2] are shown at the event types, those of one link or tag of the clicks at their picker.
const placed = (error) => ({ text: error.text,
  fields: error.fields.map(([path, message]) => [clickErrorPath(path.replace(/^event_types\[\d+\]$/,
    'event_types')), message]) });

export async function connectionView(ctx) {
  const [connectionId = 'new'] = ctx.params;  // none: the new connection's page
  const editing = connectionId !== 'new';
  const connection = editing ? (await admin(inAccount(ctx.account, `/connections/${connectionId}`))).data
    : { destination: 'webhook', enabled: true, forward_events: true, forward_purchases: true, event_types: ['*'],
      config: {}, name: '' };
  const customTypes = (await admin(inAccount(ctx.account, `/custom-event-types${query({ limit: 500 })}`))).data
    .map((t) => t.name);
  const types = ['PURCHASE', ...customTypes, ...(connection.event_types || []).filter((t) => t !== '*'
    && t !== 'PURCHASE' && !customTypes.includes(t))];

  const name = h('input', { type: 'text', name: 'name', maxlength: 200, value: connection.name || '' });
  const destination = h('select', { name: 'destination', disabled: editing },
    DESTINATIONS.map((d) => h('option', { value: d, selected: d === connection.destination }, d)));
  const enabled = h('input', { type: 'checkbox', name: 'enabled', checked: connection.enabled });
  const forwardEvents = h('input', { type: 'checkbox', name: 'forward_events', checked: connection.forward_events });
  const forwardPurchases = h('input', { type: 'checkbox', name: 'forward_purchases',
    checked: connection.forward_purchases });
  const eventTypes = eventTypesField(types, connection.event_types || []);
  const config = h('div', { class: 'config-fields grid' });
  const clicks = await clickSettings(ctx, connection.destination === 'webhook' ? connection.config?.clicks : null,
    { editable: ctx.can('connections:write') });
  const paintConfig = () => {
    config.replaceChildren(...configFields(destination.value,
      destination.value === connection.destination ? connection.config || {} : {}, editing));
    clicks.shownFor(destination.value);
  };
  destination.addEventListener('change', paintConfig);
  paintConfig();
  const shown = h('div', { class: 'shown-holder', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'primary' }, editing ? 'Save' : 'Create connection');
  const form = h('form', { class: 'card connection-form', 'aria-label': editing ? 'Edit the connection'
    : 'Create a connection', novalidate: true },
  h('div', { class: 'grid' }, field('Name', name), field('Destination', destination,
    { hint: editing ? 'A connection keeps its destination: create another for a new one.' : null })),
  h('h2', {}, 'Config'), config,
  h('h2', {}, 'What it forwards'),
  h('label', { class: 'check' }, enabled, ' Enabled'),
  h('label', { class: 'check' }, forwardPurchases, ' Forward purchases'),
  h('label', { class: 'check' }, forwardEvents, ' Forward other events'),
  eventTypes,
  clicks,
  h('div', { class: 'actions' }, submit),
  h('p', { class: 'form-error', tabindex: -1, 'aria-live': 'polite' }));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    submit.disabled = true;
    const body = { name: name.value.trim(), enabled: enabled.checked, forward_events: forwardEvents.checked,
      forward_purchases: forwardPurchases.checked, event_types: eventTypes.value(),
      config: configOf(form, destination.value, connection.config || {}, editing, clicks) };
    try {
      if (editing) {
        await admin(inAccount(ctx.account, `/connections/${connection.id}`), { method: 'PATCH', body });
        toast('Connection saved.');
        ctx.navigate(`${ctx.base}/connections/${connection.id}`, { replace: true });
      } else {
        const created = (await admin(inAccount(ctx.account, '/connections'), { method: 'POST',
          body: { ...body, destination: destination.value } })).data;
        toast('Connection created.');
        if (created.destination === 'webhook' && !body.config.secret && created.config?.secret) {
          // The secret the service made: shown here once, never again.
          const page = await connectionView({ ...ctx, params: [created.id] });
          history.replaceState(null, '', `${ctx.base}/connections/${created.id}`);
          page.querySelector('.shown-holder').replaceChildren(shownOnce('Signing secret', created.config.secret,
            { name: 'new-secret', note: 'Copy it now: it is shown only once. The receiver checks signatures with it.' }));
          form.closest('section').replaceWith(page);
          page.querySelector('.shown-holder input').focus();
        } else {
          ctx.navigate(`${ctx.base}/connections/${created.id}`, { replace: true });
        }
      }
    } catch (error) {
      if (error.status === 401) throw error;
      showErrors(form, placed(error));
    } finally {
      submit.disabled = false;
    }
  });

  const tools = [];
  if (editing) {
    const out = h('p', { class: 'muted test-verdict', role: 'status' });
    const test = h('button', { type: 'button', class: 'small' }, 'Test connection');
    test.addEventListener('click', async () => {
      test.disabled = true;
      try { await runTest(ctx, connection, out); } finally { test.disabled = false; }
    });
    const toggle = h('button', { type: 'button', class: 'small quiet' }, connection.enabled ? 'Disable' : 'Enable');
    toggle.addEventListener('click', async () => {
      toggle.disabled = true;
      await setEnabled(ctx, connection, !connection.enabled);
      ctx.navigate(`${ctx.base}/connections/${connection.id}`, { replace: true });
    });
    const rotate = h('button', { type: 'button', class: 'small quiet' }, 'New signing secret');
    rotate.addEventListener('click', async () => {
      if (!window.confirm('Make a new signing secret? The old one also signs deliveries for 24 hours.')) return;
      const answer = (await admin(inAccount(ctx.account, `/connections/${connection.id}/rotate-secret`),
        { method: 'POST' })).data;
      shown.replaceChildren(shownOnce('Signing secret', answer.secret, { name: 'new-secret',
        note: 'Copy it now: it is shown only once. The old secret also signs deliveries for 24 hours.' }));
      shown.querySelector('input').focus();
    });
    tools.push(h('div', { class: 'toolbar' }, ctx.can('deliveries:write') ? test : null,
      ctx.can('connections:write') ? toggle : null,
      connection.destination === 'webhook' && ctx.can('connections:write') ? rotate : null,
      h('a', { href: `${ctx.base}/deliveries${query({ connection: connection.id })}` }, 'Its deliveries')), out);
  }

  return h('section', { class: 'connection-page' },
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: `${ctx.base}/connections` },
      'Connections'), editing ? ` / ${connectionName(connection)}` : ' / New'),
    h('div', { class: 'title-row start' }, h('h1', { tabindex: -1 }, editing ? connectionName(connection)
      : 'New connection'), editing ? badge(connection.enabled ? 'Enabled' : 'Disabled',
      connection.enabled ? 'on' : 'off') : null),
    ...tools, shown, editableIf(ctx.account, 'connections:write', form));
}
