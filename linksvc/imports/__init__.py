"""Links brought in from other link services' exports (issue 36, "Migration in"): a parser per vendor
(:mod:`.bitly`, :mod:`.rebrandly`, :mod:`.shortio`, :mod:`.shlink`, :mod:`.yourls`, :mod:`.kutt`) to the common
:class:`~linksvc.imports.rows.ImportRow`, and :mod:`.service`, which plans and applies an import."""
