// The sections' menu on a narrow screen: below 720 px the navigation folds behind a Menu button (its
// aria-expanded says whether it is open), so the header never runs off a phone's screen; choosing a section
// folds it again. Wider, the button is hidden and the navigation always shown (app.css, tables.css).

const top = document.getElementById('top');
const button = document.getElementById('menu');

function setOpen(open) {
  top.classList.toggle('menu-open', open);
  button.setAttribute('aria-expanded', String(open));
}

button.addEventListener('click', () => setOpen(button.getAttribute('aria-expanded') !== 'true'));
top.querySelector('nav').addEventListener('click', (event) => {
  if (event.target.closest('a')) setOpen(false);
});
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && button.getAttribute('aria-expanded') === 'true') {
    setOpen(false);
    button.focus();
  }
});
window.addEventListener('popstate', () => setOpen(false));
