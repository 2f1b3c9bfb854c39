// Numbers and money as the reader's language writes them: every count, amount, rate and sum of money on every
// page goes through here. Money follows its currency's rules (Intl.NumberFormat: its symbol and its minor units,
// two for USD, none for JPY or CLP, three for KWD), so "8.5 USD" and "5 USD" both read "$8.50" and "$5.00".
// Amounts come from the API as exact decimal text; they are shown, never added up here.

const cache = new Map();
function formatter(key, options) {
  if (!cache.has(key)) cache.set(key, new Intl.NumberFormat(undefined, options));
  return cache.get(key);
}

function currencyFormat(currency) {
  try {
    return formatter(`money:${currency}`, { style: 'currency', currency, currencyDisplay: 'symbol' });
  } catch {
    return null;  // not an ISO 4217 code Intl knows: the amount and the code as they came
  }
}

// "$8.50" for ("8.5", "USD"); "—" when there is no amount.
export function money(amount, currency) {
  if (amount === null || amount === undefined || amount === '') return '—';
  const value = Number(amount);
  const format = currency ? currencyFormat(String(currency).toUpperCase()) : null;
  if (!format || !Number.isFinite(value)) return currency ? `${amount} ${currency}` : String(amount);
  return format.format(value);
}

// Revenue per currency ({"USD": "8.5", "EUR": "3"}) as one text: "$8.50, €3.00"; "—" when empty.
export function moneyText(byCurrency) {
  const entries = Object.entries(byCurrency || {});
  return entries.length ? entries.map(([currency, amount]) => money(amount, currency)).join(', ') : '—';
}

// The first currency's amount as a number, for sorting and charts (0 without one).
export function moneyValue(byCurrency) {
  const first = Object.values(byCurrency || {})[0];
  return first === undefined ? 0 : Number(first) || 0;
}

// A count: "1,234" (grouped as the reader's language groups); "—" for null.
export function count(n) {
  if (n === null || n === undefined || n === '') return '—';
  const value = Number(n);
  return Number.isFinite(value) ? formatter('count', { maximumFractionDigits: 2 }).format(value) : String(n);
}

// A plain number, such as a wallet's points, as the reader's language writes it.
export const number = count;

// A rate between 0 and 1: "12.50%"; "—" for null.
export function percent(rate) {
  if (rate === null || rate === undefined) return '—';
  const value = Number(rate);
  return Number.isFinite(value)
    ? formatter('percent', { style: 'percent', minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(value)
    : '—';
}

// "1 click", "2 clicks".
export const plural = (n, one, many) => `${count(n)} ${Number(n) === 1 ? one : many}`;
