package stats

import ("math";"testing")

func rel(g, w float64) float64 { if g == w {return 0}; return math.Abs(g-w)/math.Abs(w) }

func TestZZMargins(t *testing.T) {
	ref := loadReference(t)
	var m [12]float64
	up := func(i int, v float64){ if v > m[i] { m[i] = v } }
	for _, c := range ref.Desc {
		up(0, rel(Mean(c.X), c.Mean)); up(1, rel(IQM(c.X), c.IQM)); up(2, rel(Median(c.X), c.Median))
		if c.Var != nil { v,_ := SampleVariance(c.X); up(3, rel(v, *c.Var)); s,_ := SampleStd(c.X); up(3, rel(s,*c.Std)) }
	}
	for _, c := range ref.Wilcoxon { if c.Error != "" {continue}; r,_ := Wilcoxon(c.D); up(4, rel(r.P, c.PValue)) }
	for _, c := range ref.Chi2SF { up(5, rel(ChiSquareSF(c.X,c.DF), c.P)) }
	for _, c := range ref.NormSF { up(6, rel(NormalSF(c.Z), c.P)) }
	for _, c := range ref.Friedman { if c.Error != "" {continue}; _,p,_ := Friedman(c.Scores); up(7, rel(p, c.PValue)) }
	for _, c := range ref.BH { g := BenjaminiHochberg(c.P); for i := range g { up(8, rel(g[i], c.Adjusted[i])) } }
	for _, c := range ref.Bootstrap.CI { s := SeedFor(c.Base,c.Family,c.Metric); lo,hi := BootstrapCI(c.X, StatMean, c.Resamples, s, c.Level); up(9, rel(lo,c.MeanCI[0])); up(9, rel(hi,c.MeanCI[1])); lo,hi = BootstrapCI(c.X, StatIQM, c.Resamples, s, c.Level); up(10, rel(lo,c.IQMCI[0])); up(10, rel(hi,c.IQMCI[1])) }
	for _, c := range ref.Quantile { for i,q := range c.Q { up(11, rel(Quantile(c.Sorted,q), c.Want[i])) } }
	t.Logf("mean %.2g iqm %.2g median %.2g var/std %.2g wilcoxon %.2g chi2 %.2g norm %.2g friedman-p %.2g bh %.2g bootmean %.2g bootiqm %.2g quantile %.2g", m[0],m[1],m[2],m[3],m[4],m[5],m[6],m[7],m[8],m[9],m[10],m[11])
}
