// Dashboard charts, drawn from the stats the server embedded in the page.
(function () {
  "use strict";
  const stats = JSON.parse(document.getElementById("stats-data").textContent);
  const accent = "#2f5bd3";
  function bars(id, labels, values, options = {}) {
    const canvas = document.getElementById(id);
    if (!canvas) return;
    new Chart(canvas, {
      type: "bar",
      data: { labels, datasets: [{ label: options.label, data: values, backgroundColor: options.colors || accent }] },
      options: {
        animation: false,
        plugins: { legend: { display: true } },
        // Counts get whole-number ticks; shares (max 1) keep their fractions.
        scales: { y: { beginAtZero: true, max: options.max, ticks: options.max ? {} : { precision: 0 } } },
        indexAxis: options.horizontal ? "y" : "x",
      },
    });
  }
  const votes = stats.label_distribution.votes;
  bars("chart-labels", Object.keys(votes), Object.values(votes), { label: "counted votes" });
  bars("chart-votes", Object.keys(stats.votes_per_item), Object.values(stats.votes_per_item),
       { label: "items with this many votes" });
  bars("chart-agreement", Object.keys(stats.agreement_histogram), Object.values(stats.agreement_histogram),
       { label: "resolved items by votes for their majority" });
  const validators = stats.validators.filter((v) => v.agreement !== null);
  if (validators.length > 40) {
    // Too many for a bar each: how many validators agree how often, in tenths.
    const bins = Array.from({ length: 10 }, (_, i) => `${i * 10}–${i * 10 + 10}%`);
    const counts = new Array(10).fill(0);
    validators.forEach((v) => { counts[Math.min(9, Math.floor(v.agreement * 10))] += 1; });
    bars("chart-validators", bins, counts, { label: "validators by agreement with the majority" });
  } else {
    bars("chart-validators", validators.map((v) => v.validator), validators.map((v) => v.agreement),
         { max: 1, label: "agreement with the majority (red: unqualified)",
           colors: validators.map((v) => (v.qualified ? accent : "#b3261e")) });
  }
})();
