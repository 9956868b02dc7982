/**
 * The console's one stylesheet (inline in every page: no extra request, no CDN, no web fonts). Light and dark follow
 * `prefers-color-scheme`; widths are fluid from a 390 px phone to a desktop; long paths wrap anywhere and never push
 * the layout wider than the screen.
 */
export const CONSOLE_STYLE = `
:root{--bg:#f3f4f6;--card:#fff;--text:#111827;--muted:#5b6472;--line:#dde1e7;--accent:#e5a00d;--accent-text:#1f1600;
--link:#1d4ed8;--ok:#047857;--ok-bg:#ecfdf5;--warn:#92400e;--warn-bg:#fffbeb;--err:#b91c1c;--err-bg:#fef2f2;--code:#f3f4f6;
--info:#1e40af;--info-bg:#eff6ff;--shadow:0 1px 2px rgb(0 0 0/.05),0 6px 18px rgb(0 0 0/.05)}
@media (prefers-color-scheme:dark){:root{--bg:#0f1115;--card:#181b21;--text:#e5e7eb;--muted:#a1a9b5;--line:#2c323c;
--link:#93c5fd;--ok:#34d399;--ok-bg:#0b2a20;--warn:#fbbf24;--warn-bg:#2b2110;--err:#fca5a5;--err-bg:#2c1414;--code:#0f1115;
--info:#93c5fd;--info-bg:#111c33;--shadow:none}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;min-height:100vh;background:var(--bg);color:var(--text);
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
a{color:var(--link)}
:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
.skip{position:absolute;left:8px;top:-48px;background:var(--card);color:var(--text);padding:8px 12px;border-radius:8px;z-index:10}
.skip:focus{top:8px}
.top{position:sticky;top:0;z-index:5;background:var(--card);border-bottom:1px solid var(--line)}
.top .bar{max-width:72rem;margin:0 auto;display:flex;align-items:center;gap:4px 16px;padding:0 16px;min-height:52px}
.brand{font-size:.8rem;font-weight:800;letter-spacing:.08em;text-transform:uppercase;color:var(--accent);white-space:nowrap}
@media (prefers-color-scheme:light){.brand{color:#8a5d00}}
.navwrap{flex:1;min-width:0}
.nav{display:flex;gap:2px;margin:0;padding:0;list-style:none;overflow-x:auto;scrollbar-width:none}
.nav a{display:block;padding:14px 10px;color:var(--muted);text-decoration:none;font-weight:600;white-space:nowrap;
border-bottom:3px solid transparent}
.nav a:hover{color:var(--text)}
.nav a[aria-current=page]{color:var(--text);border-bottom-color:var(--accent)}
.live{flex:none;display:inline-flex;align-items:center;gap:6px;font-size:.8rem;color:var(--muted);min-width:6.5rem;justify-content:flex-end}
.live::before{content:"";width:8px;height:8px;border-radius:50%;background:var(--line)}
.live.on::before{background:var(--ok)}.live.lost::before{background:var(--err)}
.live.lost{color:var(--err)}
@media (max-width:560px){.top .bar{flex-wrap:wrap;padding:6px 12px 0}.navwrap{order:3;flex-basis:100%}.nav a{padding:10px 6px;font-size:.95rem}
.brand{flex:1}}
.wrap{max-width:72rem;margin:0 auto;padding:20px 16px 48px}
@media (min-width:720px){.wrap{padding:28px 24px 64px}}
h1{margin:0 0 4px;font-size:1.5rem;line-height:1.25}
h2{margin:0 0 .5rem;font-size:1.1rem}
h3{margin:0;font-size:1rem}
.lead{margin:0 0 20px;color:var(--muted)}
.panel{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:16px;box-shadow:var(--shadow);margin:0 0 16px}
@media (min-width:720px){.panel{padding:20px 24px}}
.stats{display:flex;flex-wrap:wrap;gap:8px 24px;margin:0 0 16px;padding:0;list-style:none}
.stats li{color:var(--muted)}.stats b{color:var(--text);font-variant-numeric:tabular-nums}
code,.path{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
code{background:var(--code);border:1px solid var(--line);border-radius:6px;padding:1px 5px;overflow-wrap:anywhere}
.path{overflow-wrap:anywhere;word-break:break-word;unicode-bidi:isolate;direction:ltr;text-align:left}
.folder{font-weight:600;font-size:.95rem;margin:0}
.muted{color:var(--muted)}.small{font-size:.875rem}
.num{font-variant-numeric:tabular-nums}
.items{list-style:none;margin:0;padding:0}
.item{display:grid;grid-template-columns:minmax(0,1fr) auto;gap:8px 16px;padding:14px 0;border-top:1px solid var(--line)}
.item:first-child{border-top:0;padding-top:4px}
.item .facts{display:flex;flex-wrap:wrap;gap:4px 14px;margin:6px 0 0;padding:0;list-style:none;font-size:.875rem;color:var(--muted)}
.item .facts b{color:var(--text);font-weight:600}
.item .actions{display:flex;gap:8px;align-items:flex-start;flex-wrap:wrap;justify-content:flex-end}
@media (max-width:560px){.item{grid-template-columns:minmax(0,1fr)}.item .actions{justify-content:flex-start}}
.item.fresh{animation:fresh 1.6s ease-out}
@keyframes fresh{from{background:var(--info-bg)}to{background:transparent}}
@media (prefers-reduced-motion:reduce){.item.fresh{animation:none}}
details{margin-top:6px}
summary{cursor:pointer;color:var(--link);font-size:.875rem;width:max-content;max-width:100%}
.requests{list-style:none;margin:6px 0 0;padding:0 0 0 12px;border-left:2px solid var(--line);font-size:.875rem}
.requests li{padding:3px 0}
.badge{display:inline-block;border-radius:999px;padding:1px 9px;font-size:.8rem;font-weight:700;border:1px solid;line-height:1.5;white-space:nowrap}
.badge.ok{color:var(--ok);background:var(--ok-bg)}.badge.err{color:var(--err);background:var(--err-bg)}
.badge.warn{color:var(--warn);background:var(--warn-bg)}.badge.info{color:var(--info);background:var(--info-bg)}
.badge.muted{color:var(--muted);background:transparent}
.reason{margin:6px 0 0;padding:8px 10px;border-radius:8px;background:var(--err-bg);color:var(--text);font-size:.875rem;border:1px solid var(--err)}
.btn,button{display:inline-flex;align-items:center;justify-content:center;font:inherit;font-weight:700;font-size:.875rem;
padding:7px 14px;min-height:36px;border-radius:8px;border:1px solid var(--line);background:var(--card);color:var(--text);cursor:pointer;
text-decoration:none;white-space:nowrap}
.btn:hover,button:hover{border-color:var(--muted)}
.btn.primary,button.primary{background:var(--accent);border-color:var(--accent);color:var(--accent-text)}
.btn.danger,button.danger{color:var(--err)}
button.big{font-size:1rem;min-height:48px;padding:12px 20px}
button[disabled]{opacity:.6;cursor:progress}
form.inline{display:inline}
label{font-weight:600}
.panel form>label{display:block;margin:0 0 6px}
input[type=text],input[type=search],select{font:inherit;font-size:16px;padding:9px 12px;border:1px solid var(--line);border-radius:8px;
background:var(--bg);color:var(--text);min-height:42px;max-width:100%}
input.pathinput{display:block;width:100%;padding:12px 14px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.filters{display:flex;flex-wrap:wrap;gap:10px 12px;align-items:flex-end;margin:0 0 12px}
.filters .field{display:flex;flex-direction:column;gap:4px;min-width:0}
.filters .grow{flex:1 1 16rem}
.filters .grow input{width:100%}
.filters label{font-size:.8rem;color:var(--muted)}
@media (max-width:560px){.filters .field:not(.grow){flex:1 1 9rem}.filters select{width:100%}}
.toolbar{display:flex;flex-wrap:wrap;gap:8px 12px;align-items:center;justify-content:space-between;margin:0 0 8px}
.pager{display:flex;flex-wrap:wrap;gap:8px;align-items:center;justify-content:space-between;margin-top:12px;padding-top:12px;border-top:1px solid var(--line)}
.pager .btn[aria-disabled=true]{opacity:.45;pointer-events:none}
.flash{border-radius:10px;padding:12px 14px;margin:0 0 16px;border:1px solid}
.flash.ok{background:var(--ok-bg);border-color:var(--ok)}.flash.err{background:var(--err-bg);border-color:var(--err)}
.flash.warn{background:var(--warn-bg);border-color:var(--warn)}
.flash h2{font-size:1rem;margin:0 0 4px}.flash.ok h2{color:var(--ok)}.flash.err h2{color:var(--err)}.flash.warn h2{color:var(--warn)}
.flash p{margin:.2rem 0}
.empty{padding:20px 0 8px;color:var(--muted);text-align:center}
dl.kv{margin:.4rem 0 0;display:grid;grid-template-columns:max-content minmax(0,1fr);gap:6px 14px}
dl.kv dt{color:var(--muted);font-size:.875rem;padding-top:1px}dl.kv dd{margin:0;min-width:0}
@media (max-width:560px){dl.kv{grid-template-columns:minmax(0,1fr);gap:0}dl.kv dd{margin-bottom:8px}}
table{width:100%;border-collapse:collapse;font-size:.9rem}
table.connect-apps th[scope=row]{white-space:nowrap}table.connect-apps code.url{display:inline-block;margin:2px 0}
th,td{text-align:left;padding:8px 8px;border-top:1px solid var(--line);vertical-align:top}
th{font-size:.8rem;color:var(--muted);font-weight:600;border-top:0}
@media (max-width:560px){table.stack thead{position:absolute;clip:rect(0 0 0 0);width:1px;height:1px;overflow:hidden}
table.stack tr{display:block;border-top:1px solid var(--line);padding:8px 0}table.stack td{display:block;border:0;padding:2px 0}
table.stack td[data-label]::before{content:attr(data-label) ": ";color:var(--muted);font-size:.8rem}}
.hint{margin:6px 0 14px;color:var(--muted);font-size:.875rem}
.cmd{display:block;margin-top:4px;padding:8px 10px;white-space:pre-wrap}
footer.foot{margin-top:24px;color:var(--muted);font-size:.85rem}
.targets{list-style:none;display:flex;flex-wrap:wrap;gap:4px 16px;margin:8px 0 0;padding:0;font-size:.875rem;overflow-wrap:anywhere}
.targets li{display:flex;flex-wrap:wrap;align-items:center;gap:4px 6px;min-width:0}
.targets .why{flex-basis:100%}
@media (min-width:720px){.top .bar{padding:0 24px}}
.sr{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
.problems{list-style:none;margin:6px 0 12px;padding:0}
.problems li{margin:0 0 8px;padding:8px 12px;border-radius:8px;background:var(--card);border:1px solid var(--warn)}
.problems p{margin:.15rem 0}
form.confirm{display:flex;flex-wrap:wrap;gap:8px 12px;align-items:center;margin-top:12px}
table.mappings th:nth-child(-n+2){width:30%}
.wrapany,.wrapany dd{overflow-wrap:anywhere}.flash.err h3{color:var(--err);margin:0 0 4px}td.when{white-space:nowrap}
.filters input,.filters select{height:44px}.filters button,.filters .btn{min-height:44px}
`;
