// What the service's keys are called for people: platforms, browsers, in-app browsers and bots of the
// resolver's classifier, campaign platforms, and the device names of the user agent's full parse. The
// parse's browser and OS names ("Chrome Mobile", "Mac OS X") are already words and stay as they are.

const PLATFORMS = { android: 'Android', ios: 'iPhone & iPad', desktop: 'Desktop', unknown: 'Unknown', web: 'Web' };
const BROWSERS = {
  chrome: 'Chrome', samsung: 'Samsung Internet', edge: 'Microsoft Edge', opera: 'Opera', firefox: 'Firefox',
  safari: 'Safari', silk: 'Amazon Silk', webview: 'an in-app browser', other: 'another browser',
};
const APPS = { facebook: 'Facebook', instagram: 'Instagram', tiktok: 'TikTok', webview: 'another app' };
const BOTS = {
  googlebot: 'Googlebot', bingbot: 'Bingbot', facebot: 'Facebot', slackbot: 'Slackbot', telegrambot: 'TelegramBot',
  twitterbot: 'Twitterbot', linkedinbot: 'LinkedInBot', discordbot: 'Discordbot', applebot: 'Applebot',
  pinterestbot: 'Pinterestbot', facebookexternalhit: 'Facebook link preview', 'meta-externalagent': 'Meta crawler',
  whatsapp: 'WhatsApp link preview', 'slack-imgproxy': 'Slack link preview', skypeuripreview: 'Skype link preview',
  'google-inspectiontool': 'Google Inspection Tool', 'chrome-lighthouse': 'Lighthouse', vkshare: 'VK link preview',
  embedly: 'Embedly', iframely: 'Iframely', flipboardproxy: 'Flipboard', 'bluesky cardyb': 'Bluesky link preview',
  'curl/': 'curl', 'wget/': 'Wget', 'python-requests/': 'Python Requests', 'http.rb/': 'http.rb',
  'go-http-client/': 'Go HTTP client', bot: 'an unnamed bot', crawler: 'an unnamed crawler', spider: 'an unnamed crawler',
  preview: 'a link preview',
};

export const platformName = (key) => PLATFORMS[key] || key || 'Unknown';
export const platformsText = (keys) => keys.map(platformName).join(', ');

// The device step of the resolver's explanation in words; the service's own text when it has no fields.
export function deviceSentence(step) {
  if (!step.platform) return step.text;
  if (step.bot) return `A bot or link-preview crawler (${BOTS[step.browser] || step.browser}), whatever its platform`;
  const parts = [platformName(step.platform)];
  const browser = BROWSERS[step.browser] || step.browser;
  if (step.platform === 'android' && !step.in_app) {
    parts.push(step.intents ? `${browser}, which opens the app with an intent URL` : `${browser}, without intent URLs`);
  } else if (!step.in_app && step.browser && step.browser !== 'other') {
    parts.push(browser);
  }
  parts.push('not a bot');
  parts.push(step.in_app ? `in the ${APPS[step.in_app] || step.in_app} in-app browser` : 'not in an app');
  return parts.join(', ');
}

// "Samsung SM-S918B", "Android phone (model not sent)"; ua-parser names the phones whose reduced user agent
// hides the model "Generic_Android" with the model "K", and crawlers "Spider".
export function deviceName(brand, model) {
  if (!brand) return 'Unknown';
  if (brand === 'Spider') return 'Crawler';
  const generic = { Generic_Android: 'Android phone', Generic_Android_Tablet: 'Android tablet', Generic: 'Device' };
  if (generic[brand]) return model && model !== 'K' ? `${generic[brand]} ${model}` : `${generic[brand]} (model not sent)`;
  return [brand, model].filter(Boolean).join(' ');
}
